"""A scripted HTTP server on 127.0.0.1 for what cannot run here (Ollama) and for broken servers.

Each route answers with a `Reply`: a status and body pieces written one by one (flushed,
optionally paced), in chunked framing or plain until close, complete or cut off.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.helpers.serving import running


@dataclass(frozen=True)
class Reply:
    pieces: tuple[bytes, ...] = ()
    status: int = 200
    content_type: str = "application/json"
    pause_s: float = 0.0  # before each piece after the first
    first_pause_s: float = 0.0  # before the first piece (after the headers)
    chunked: bool = True
    complete: bool = True  # False: close the connection mid-body
    headers: tuple[tuple[str, str], ...] = ()  # e.g. (("Retry-After", "1"),)
    reset: bool = False  # reset the connection (RST) before sending a byte

    @staticmethod
    def json(data: Any, status: int = 200) -> Reply:
        return Reply((json.dumps(data).encode(),), status=status)


Route = Reply | Callable[[Any], Reply]


def ndjson(*lines: dict[str, Any]) -> tuple[bytes, ...]:
    return tuple(json.dumps(line).encode() + b"\n" for line in lines)


def sse(*chunks: dict[str, Any] | str) -> tuple[bytes, ...]:
    return tuple(b"data: " + (c.encode() if isinstance(c, str) else json.dumps(c).encode())
                 + b"\n\n" for c in chunks)


@dataclass
class Loopback:
    """`with Loopback({("POST", "/api/chat"): Reply(...)}) as server: server.url`"""

    routes: dict[tuple[str, str], Route]
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def __enter__(self) -> Loopback:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # each piece leaves when written, as servers do

            def log_message(self, *_: Any) -> None:
                pass

            def handle(self) -> None:
                # the client may hang up mid-stream, as a driver does after a cut stream
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                    super().handle()

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                owner.requests.append((method, self.path, body))
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                route = owner.routes.get((method, self.path))
                if route is None:
                    reply = Reply.json({"error": f"no route {method} {self.path}"}, 404)
                else:
                    reply = route(body) if callable(route) else route
                self._write(reply)

            def _write(self, reply: Reply) -> None:
                if reply.reset:  # linger 0: close() sends RST, as a crashing proxy does
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                for name, value in reply.headers:
                    self.send_header(name, value)
                if reply.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.flush()
                for index, piece in enumerate(reply.pieces):
                    time.sleep(reply.first_pause_s if index == 0 else reply.pause_s)
                    data = (f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
                            if reply.chunked else piece)
                    try:
                        self.wfile.write(data)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                if reply.chunked and reply.complete:
                    self.wfile.write(b"0\r\n\r\n")
                self.close_connection = not (reply.chunked and reply.complete)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._running = running(self._server)
        self._running.__enter__()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def posted(self, path: str) -> list[Any]:
        return [body for method, p, body in self.requests if method == "POST" and p == path]

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._running.__exit__(None, None, None)


def sequence(*replies: Reply) -> Callable[[Any], Reply]:
    """A route that answers with each reply in turn, then repeats the last one."""
    left = list(replies)

    def route(_: Any) -> Reply:
        return left.pop(0) if len(left) > 1 else left[0]

    return route
