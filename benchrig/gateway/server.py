"""The gateway's HTTP side: a threaded server on loopback that routes `/s/<token>/v1/…` to
the session's front, forwards to the back end and meters the call; errors are 400/404/502
with the reason, never a 500."""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from benchrig.gateway import chat
from benchrig.gateway.backend import Backend
from benchrig.gateway.call import BackendError, RequestError
from benchrig.gateway.fronts import CHAT, Front, front_for, post_front
from benchrig.gateway.metering import Meter, Session
from benchrig.gateway.prices import PriceTable
from benchrig.textsafe import stored

MAX_BODY = 64 << 20  # bytes of one request body (an agent's whole context fits many times)
LOOPBACK = "127.0.0.1"
DEFAULT_SESSION = "default"


class Gateway:
    """One back end behind a loopback HTTP server; sessions group its calls. Use as a
    context manager, or start() and stop()."""

    def __init__(self, backend: Backend, *, port: int = 0, prices: PriceTable | None = None,
                 open_default: bool = False) -> None:
        self.backend = backend
        self.prices = prices or PriceTable()
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        # the gateway listens on loopback only: agents on this machine reach it, no one else
        self._server = _Server((LOOPBACK, port), _Handler)
        self._server.daemon_threads = True
        self._server.gateway = self  # type: ignore[attr-defined]
        self.port: int = self._server.server_address[1]
        self.url = f"http://{LOOPBACK}:{self.port}"
        self._thread: threading.Thread | None = None
        self.default = self.open_session("standalone", DEFAULT_SESSION) if open_default \
            else None

    def open_session(self, label: str = "", token: str | None = None) -> Session:
        """A new session with an unguessable token: its calls are metered apart."""
        token = token or secrets.token_urlsafe(18)
        session = Session(token, label, f"{self.url}/s/{token}")
        with self._lock:
            self._sessions[token] = session
        return session

    def close_session(self, session: Session) -> tuple[Any, ...]:
        """Forget the session (its URL then answers 404); its calls."""
        with self._lock:
            self._sessions.pop(session.token, None)
        return session.calls()

    def session(self, token: str | None) -> Session | None:
        if token is None:
            return self.default
        with self._lock:
            return self._sessions.get(token)

    def start(self) -> Gateway:
        # how soon a stop is seen: every stop waited out up to this, ~1 ms CPU a second idle
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name=f"benchrig-gateway-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
        self.backend.close()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    # the default backlog of 5 drops connections when an executor starts many agents at
    # once (32 concurrent streams lost some under load)
    request_queue_size = 256


def route(path: str) -> tuple[str | None, str] | None:
    """(session token or None for the default, the API path after the session), or None."""
    path = path.split("?", 1)[0]
    if path.startswith("/s/"):
        token, _, rest = path[3:].partition("/")
        return (token, "/" + rest) if token else None
    return None, path


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "benchrig-gateway"

    def setup(self) -> None:
        super().setup()
        # small SSE writes go out at once (Nagle would hold them for the next ACK)
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the terminal is BenchRig's: calls are metered, not logged

    @property
    def gateway(self) -> Gateway:
        return self.server.gateway  # type: ignore[attr-defined, no-any-return]

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _fail(self, status: int, message: str, front: Front = CHAT) -> None:
        self._send(status, front.error_body(stored(message, 2000), status))

    def _fail_quietly(self, status: int, message: str, front: Front) -> None:
        """An error reply to a client that may have hung up meanwhile (an agent killed at
        its timeout while the model was reading its prompt): the call is already recorded."""
        try:
            self._fail(status, message, front)
        except OSError:
            self.close_connection = True

    def _session(self) -> tuple[Session, str] | None:
        found = route(self.path)
        session = self.gateway.session(found[0]) if found else None
        if found is None or session is None:
            self._fail(404, "no such session: use the base URL your session was given")
            return None
        return session, found[1]

    def do_GET(self) -> None:
        if self.path == "/health":
            self._send(200, b'{"status":"ok"}')
            return
        found = self._session()
        if found is None:
            return
        session, api = found
        backend = self.gateway.backend
        if api in ("/v1/models", "/models"):
            model = session.model or backend.model_id("")  # what its agent was told
            self._send(200, orjson.dumps({"object": "list", "data": [
                {"id": model, "object": "model", "owned_by": "benchrig"}]}))
        elif api == "/v1/benchrig/server":
            self._send(200, orjson.dumps(backend.settings()))
        elif api == "/v1/benchrig/calls":  # read-only: the session's own calls so far
            self._send(200, orjson.dumps([c.to_json() for c in session.calls()]))
        else:
            self._fail(404, f"no route GET {api}")

    def do_POST(self) -> None:
        found = self._session()
        if found is None:
            self._drain()
            return
        session, api = found
        body = self._body()
        if body is None:
            return
        front = post_front(api, self.path.partition("?")[2])
        if front is None:
            self._fail(404, f"no route POST {api}", front_for(api))
        else:
            self._call(session, body, front)

    def _drain(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= MAX_BODY:
            self.rfile.read(length)

    def _body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            self._fail(411, "a request body with a Content-Length is required")
            self.close_connection = True
            return None
        if not 0 <= length <= MAX_BODY:
            self._fail(413, f"the body is over {MAX_BODY} bytes")
            self.close_connection = True
            return None
        return self.rfile.read(length)

    def _call(self, session: Session, raw: bytes, front: Front) -> None:
        gateway = self.gateway
        backend = gateway.backend
        try:
            request = front.parse(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            self._fail(400, f"the body is not JSON: {exc}", front)
            return
        except RequestError as exc:
            self._fail(400, str(exc), front)
            return
        except Exception as exc:  # a shape no reader foresaw is still the
            # request's: a 400 with the reason, never a dropped connection (clients retry)
            self._fail(400, f"the request cannot be read: {type(exc).__name__}: {exc}",
                       front)
            return
        model = backend.model_id(request.model)
        meter = Meter(session.next_context(), front=front.name, backend=backend.name,
                      model=model, stream=request.stream, request_bytes=len(raw),
                      prices=gateway.prices)
        writer = front.writer(request, model)
        events = meter.watch(backend.complete(request, meter.context))
        recorded: list[str] = []

        def record(status: str) -> None:
            """The call's record goes in before its last byte goes out: an agent that exits
            on that byte finds its session complete."""
            if not recorded:
                recorded.append(status)
                session.record(meter.finish(status))

        try:
            if request.stream:
                self._stream(meter, chat.stream_bytes(writer, events), record, front)
            else:
                for event in events:
                    writer.event(event)
                body = orjson.dumps(writer.whole())
                meter.sent(len(body))
                record("ok")
                self._send(200, body)
        except RequestError as exc:
            record(f"refused: {exc}")
            self._fail_quietly(400, str(exc), front)
        except BackendError as exc:
            record(f"back end failed: {exc}")
            self._fail_quietly(exc.status, f"the back end failed: {exc}", front)
        except (BrokenPipeError, ConnectionResetError):
            record("the client hung up")
            self.close_connection = True
        except Exception as exc:  # a gateway fault: the call is recorded, the client told
            status = f"gateway error: {type(exc).__name__}: {exc}"
            record(status)
            self._fail_quietly(502, status, front)
        finally:
            events.close()  # ends the back end's generation (and frees its lock) at once
            record("ended")

    def _stream(self, meter: Meter, chunks: Iterator[bytes], record: Callable[[str], None],
                front: Front) -> None:
        """Chunked SSE, headers sent with the first write (so a failure before it is still
        an HTTP error); a failure after it ends the stream with an error event. What the
        back end made leaves at each pause (b""), or at the next event when it never
        pauses; the last write waits until the call is recorded."""
        held = bytearray()
        started = False

        def flush() -> None:
            nonlocal started
            if not held:
                return
            if not started:
                self.send_response(200)
                self.send_header("Content-Type", front.stream_type)
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                started = True
            self._chunk(bytes(held))
            held.clear()

        pauses = False
        try:
            for data in chunks:
                if not data:
                    pauses = True
                    flush()
                    continue
                if not pauses:
                    flush()
                meter.sent(len(data))
                held.extend(data)
        except (RequestError, BackendError) as exc:
            if not started and not held:
                raise
            flush()
            record(f"back end failed mid-stream: {exc}")
            self._chunk(front.sse_error(str(exc)), last=True)
            return
        if not started and not held:  # every back end ends with Done: this one failed
            raise BackendError("the back end ended the call without a reply")
        record("ok")
        if started:
            self._chunk(bytes(held), last=True)
        else:  # the whole reply in one go: headers, body, its end
            flush()
            self._chunk(b"")

    def _chunk(self, data: bytes, last: bool = False) -> None:
        """One chunk of the body; `last` adds the end of the body in the same write."""
        frame = b"%x\r\n%s\r\n" % (len(data), data) if data else b""
        self.wfile.write(frame + b"0\r\n\r\n" if last or not data else frame)
