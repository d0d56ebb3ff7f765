"""`benchrig view`'s server: on 127.0.0.1, the page's shell at once, then its rows and its
report part once read, each attempt's details and its transcript on demand; read only (GET
and HEAD; nothing is ever written)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchrig.report.viewer import detail, island, payload, read_sidecar_file, whole
from benchrig.resultio.record import Record
from benchrig.textsafe import printable_lines

TRANSCRIPT_CAP = 1 << 20  # characters of a transcript sent (it is made printable first)

Json = dict[str, Any]


class Site:
    """What the server sends: the shell at once; the rows, then the report part, once the
    caller has read the results (a request for them waits until then); per attempt its
    result and its sidecar. Each is computed once and kept as the bytes sent."""

    def __init__(self, shell: bytes) -> None:
        self.shell = shell
        self.rows = b""
        self.report = b""
        self.results: list[Record] = []
        self.transcripts: list[Path | None] = []  # a sidecar beside its result, or none
        self.rows_ready = threading.Event()
        self.rows_sent = threading.Event()  # a page has its rows: the report may take the CPU
        self.report_ready = threading.Event()

    def set_results(self, results: list[Record], transcripts: list[Path | None]) -> None:
        """The results read: their rows made (only the fields a row shows), once."""
        self.results, self.transcripts = results, transcripts
        self.rows = island({**payload(results, embed_details=False),
                            "served": True}).encode()
        self.rows_ready.set()

    def set_report(self, page: bytes) -> None:
        """The report part (scorecards, charts, heat map), rendered once."""
        self.report = page
        self.report_ready.set()


def sidecars(results: list[Record], folders: list[Path]) -> list[Path | None]:
    """Each result's transcript: a regular file named exactly as the result says, in one
    of the folders given. A name with a path in it (`../x`) is never looked up."""
    found: list[Path | None] = []
    for result in results:
        name = result.transcript_file
        path = None
        if isinstance(name, str) and name and Path(name).name == name and "\\" not in name:
            path = next((f / name for f in folders if (f / name).is_file()
                         and not (f / name).is_symlink()), None)
        found.append(path)
    return found


def _transcript(path: Path) -> str:
    """The transcript as printable lines (at most TRANSCRIPT_CAP characters)."""
    with path.open(encoding="utf-8", errors="replace") as file:
        return printable_lines(file.read(TRANSCRIPT_CAP), TRANSCRIPT_CAP)


def handler(site: Site) -> Callable[..., BaseHTTPRequestHandler]:
    """A request handler over `site`: /, /attempt/N (JSON), /transcript/N (plain text)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the terminal shows the URL and nothing a page asks for

        def _send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-store")
            if not kind.startswith("text/html"):
                self.send_header("Content-Security-Policy", "default-src 'none'; sandbox")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _index(self, prefix: str) -> int | None:
            tail = self.path[len(prefix):]
            if not tail.isdigit() or not tail.isascii():
                return None
            number = int(tail)
            return number if number < len(site.results) else None

        def _ours(self) -> bool:
            """Whether the request names this server as its host: a page elsewhere that
            rebinds its own name to 127.0.0.1 (DNS rebinding) is refused, not served."""
            address = self.server.server_address
            port = address[1] if isinstance(address, tuple) else None
            return self.headers.get("Host", "") in (f"127.0.0.1:{port}", f"localhost:{port}")

        def do_GET(self) -> None:
            if not self._ours():
                self._send(421, b"not this host\n", "text/plain; charset=utf-8")
                return
            if self.path in ("/", "/index.html"):
                self._send(200, site.shell, "text/html; charset=utf-8")
                return
            if self.path == "/rows":
                site.rows_ready.wait()
                self._send(200, site.rows, "application/json")
                site.rows_sent.set()
                return
            if self.path == "/report":
                site.report_ready.wait()
                self._send(200, site.report, "text/html; charset=utf-8")
                return
            site.rows_ready.wait()  # an attempt's index means nothing before the rows
            if self.path.startswith("/attempt/") and (i := self._index("/attempt/")) is not None:
                found = site.transcripts[i]
                sidecar = read_sidecar_file(found) if found is not None else None
                body = island(detail(whole(site.results[i]), sidecar))
                self._send(200, body.encode(), "application/json")
                return
            i = self._index("/transcript/") if self.path.startswith("/transcript/") else None
            path = None if i is None else site.transcripts[i]
            if path is not None:
                self._send(200, _transcript(path).encode(), "text/plain; charset=utf-8")
                return
            self._send(404, b"not found\n", "text/plain; charset=utf-8")

        do_HEAD = do_GET

        def _refuse(self) -> None:
            self._send(405, b"read only\n", "text/plain; charset=utf-8")

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    return Handler


def server(site: Site, port: int = 0) -> ThreadingHTTPServer:
    """The server bound to 127.0.0.1 (`port` 0: a free one); serve_forever runs it."""
    made = ThreadingHTTPServer(("127.0.0.1", port), handler(site))
    made.daemon_threads = True
    return made
