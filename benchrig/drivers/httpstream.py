"""What the HTTP runtimes share: base URLs, timed streaming reads, retries of transient
server errors, server errors as DriverError, and the reading of counters a server sends."""

from __future__ import annotations

import contextlib
import email.utils
import ipaddress
import json
import random
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from benchrig.core.deadline import Deadline, closing_on_stop
from benchrig.core.errors import DriverError, UsageError
from benchrig.core.measurements import Metrics
from benchrig.core.toolcase import ToolReply
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.jsonsafe import LARGEST_COUNT, NUMERIC_ERRORS, finite
from benchrig.streams import EventTooLarge
from benchrig.textsafe import stored

if TYPE_CHECKING:
    import httpx

CONNECT_TIMEOUT_S = 10.0
ERROR_BODY_CHARS = 2000
# Transient server errors (docs/results.md#errors): retried up to RETRIES times, waiting
# BACKOFF_BASE_S·2^n ± 50 % (or what Retry-After asks), never more than BACKOFF_CAP_S at a
# time and never past the attempt's deadline.
RETRIES = 4
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# What one response may cost, whatever the server sends (bytes after decompression): a
# stream of 32k tokens is about 10 MB, a plain JSON answer (a tool turn, /api/show, a
# tokenizer's list) a few; an error body is read only as far as its message is kept.
RESPONSE_CAP = 64 << 20
JSON_CAP = 16 << 20
JSON_VALUES_CAP = 2_000_000  # `[],` is 80 bytes of Python per 3 bytes of JSON
ERROR_BODY_CAP = 64 << 10
# Compressed bodies are inflated at most this many bytes at a time: a 64 KiB read of a
# gzip bomb would otherwise become 64 MiB at once (deflate reaches 1032:1).
INFLATE_STEP = 256 << 10
# Only what BenchRig can inflate in bounded steps is asked for (httpx would add br and zstd
# when their packages happen to be installed); any other coding is refused.
ACCEPT_ENCODING = "gzip, deflate"


def base_url(url: str, driver: str) -> str:
    """`url` without its trailing slash, or UsageError when it is not an http(s) URL."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{driver}: the provider slot must be a base URL such as "
                         f"http://127.0.0.1:8080/v1, not {url!r}")
    return url.strip().rstrip("/")


_TLS_MADE = threading.Lock()


def _tls() -> ssl.SSLContext:
    """One TLS context per process: httpx builds a new one per client otherwise (50–100 ms
    of CPU each, measured here, which 32 concurrent attempts would pay while timing). Made
    under a lock: `--jobs 8` starts eight first attempts at once, which would all make it."""
    with _TLS_MADE:
        return _tls_context()


@cache
def _tls_context() -> ssl.SSLContext:
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine's loopback interface (127.0.0.0/8, ::1, localhost)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client(timeout_s: float, url: str) -> httpx.Client:
    """An HTTP client for the server at `url` whose reads wait up to `timeout_s` (what is left
    of the attempt's deadline: CPU prefill is slow). A loopback server is never reached
    through HTTP(S)_PROXY: a proxy there would fail the run or add a hop to every figure."""
    import httpx

    return httpx.Client(timeout=request_timeout(timeout_s),
                        verify=_tls(), trust_env=not is_loopback(url),
                        headers={"Accept-Encoding": ACCEPT_ENCODING})


def request_timeout(timeout_s: float) -> httpx.Timeout:
    """What one request waits: `timeout_s` for each read, and for the connection (the TLS
    handshake included) at most CONNECT_TIMEOUT_S of it — a server that accepts and stays
    silent is the server's failure, not the model's time."""
    import httpx

    return httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s))


class _Inflater:
    """A gzip or deflate body inflated at most INFLATE_STEP bytes at a time, however much
    one read would expand. gzip may come in several members; deflate as zlib (RFC 9110) or,
    as some servers send it, raw."""

    def __init__(self, coding: str) -> None:
        self.gzip = coding != "deflate"
        self.raw_maybe = not self.gzip  # until the first bytes say whether it is zlib
        self.inflater = self._new()

    def _new(self) -> Any:
        return zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self.inflater.decompress(data, INFLATE_STEP)
            except zlib.error:
                if not self.raw_maybe:
                    raise
                self.raw_maybe = False
                self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self.raw_maybe = False
            data = self.inflater.unconsumed_tail
            if self.inflater.eof:  # gzip: another member may follow; zlib: nothing may
                data = self.inflater.unused_data if self.gzip else b""
                self.inflater = self._new()
            if out:
                yield out

    def flush(self) -> bytes:
        """What the inflater still holds: at most a match and a window (tens of KiB)."""
        return bytes(self.inflater.flush())


def _inflater(response: httpx.Response) -> _Inflater | None:
    """The response's Content-Encoding as an inflater (None: identity); a coding BenchRig
    did not ask for is the server's fault."""
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding in ("", "identity"):
        return None
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise DriverError("infra", f"the server sent its body in Content-Encoding "
                          f"{coding[:40]!r}, which BenchRig did not ask for "
                          f"(Accept-Encoding: {ACCEPT_ENCODING})")
    return _Inflater(coding)


def capped_body(response: httpx.Response, cap: int, url: str, cut: bool = False
                ) -> Iterator[bytes]:
    """The response's body as it arrives, decompressed in bounded steps: at most `cap` bytes
    in all. Past it: DriverError (infra) naming the cap, or with `cut`, the end of the body
    (an error body is read only as far as its message is kept). Memory stays bounded by the
    cap, whatever the server sends or however well it compresses."""
    inflater = _inflater(response)

    def pieces() -> Iterator[bytes]:
        for raw in response.iter_raw():
            yield from [raw] if inflater is None else inflater.feed(raw)
        if inflater is not None:
            yield inflater.flush()

    total = 0
    try:
        for piece in pieces():
            if total + len(piece) > cap:
                if cut:
                    yield piece[:cap - total]
                    return
                raise DriverError("infra", f"the response from {url} is more than "
                                  f"{cap >> 20} MiB (BenchRig's cap of one response); read "
                                  "no further")
            total += len(piece)
            yield piece
    except zlib.error as exc:
        raise DriverError("infra", f"the body from {url} could not be decompressed: "
                          f"{exc}") from None


def read_capped(response: httpx.Response, cap: int, url: str, cut: bool = False) -> bytes:
    """The whole body within `cap` (see `capped_body`)."""
    return b"".join(capped_body(response, cap, url, cut))


def fed(feed: Callable[[bytes], list[Any]], chunk: bytes, url: str) -> list[Any]:
    """The events or lines `chunk` completes through a decoder's `feed`; one that grew past
    the decoder's cap (streams.EVENT_CAP) is the server's fault, said plainly."""
    try:
        return feed(chunk)
    except EventTooLarge as exc:
        raise DriverError("infra", f"{url} sent {exc}; read no further") from None


def server_message(body: bytes) -> str:
    """The error a server put in its body: `{"error": "…"}`, `{"error": {"message": …}}`,
    `{"detail": …}`, or the text itself."""
    text = body[:ERROR_BODY_CHARS].decode("utf-8", "replace").strip()
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return text or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error", data.get("detail"))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            try:
                # `"\ud800"` in the body parses to a lone surrogate: stored safely here
                return stored(str(error), ERROR_BODY_CHARS)
            except RecursionError:  # nested too deep to print: the body as sent
                return text
    return text


def _transport_error(exc: Exception, url: str, timeout_s: float) -> DriverError:
    import httpx

    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):  # the server, not the model
        return DriverError("infra", f"could not connect to {url} in time "
                           f"({type(exc).__name__})")
    if isinstance(exc, httpx.TimeoutException):
        return DriverError("timeout", f"no answer from {url} within {timeout_s:g} s "
                           f"({type(exc).__name__})")
    if isinstance(exc, httpx.ConnectError):
        return DriverError("infra", f"cannot connect to {url}: {exc}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return DriverError("infra", f"the stream from {url} was cut: {exc}")
    return DriverError("infra", f"HTTP request to {url} failed: {type(exc).__name__}: {exc}")


def ran_out(deadline: Deadline, url: str) -> DriverError:
    """The attempt's deadline passed while `deadline.phase` was talking to `url`."""
    return DriverError("timeout", f"{deadline.phase or 'the attempt'} ran out of the "
                       f"attempt's timeout_s={deadline.budget_s:g} ({url}, "
                       f"{deadline.elapsed():.2f} s into the attempt)", phase=deadline.phase)


@contextlib.contextmanager
def opened(http: httpx.Client, method: str, url: str, deadline: Deadline, **kwargs: Any
           ) -> Iterator[httpx.Response]:
    """`http.stream(method, url, **kwargs)`, its socket shut when `deadline` passes and by
    one closer at a time when the attempt is stopped: until the headers come, the client's
    busy connections (`shut_busy`: httpx shows no socket before the response); from then
    on, the response's own (`watchdog`)."""
    with contextlib.ExitStack() as held:
        with closing_on_stop(lambda: shut_busy(http)):
            response = held.enter_context(http.stream(method, url, **kwargs))
        # a stop in between finds the watchdog's closer and runs it at once
        held.enter_context(watchdog(response, deadline, http))
        yield response


@contextlib.contextmanager
def watchdog(response: httpx.Response, deadline: Deadline, http: httpx.Client
             ) -> Iterator[None]:
    """Shut the response's socket down when the deadline passes, or at once when the attempt
    is stopped (Ctrl-C). A read timeout restarts with every byte, so a server that drips
    bytes could otherwise hold a read far past it; the shut-down socket ends the blocked
    read at once, and the caller reports `ran_out`."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if not isinstance(sock, socket.socket):  # a transport that shows none: closed as before
        with closing_on_stop(lambda: shut_busy(http)):
            yield
        return

    def shut(sock: socket.socket = sock) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(deadline.left(), shut)
    timer.daemon = True
    timer.start()
    try:
        with closing_on_stop(shut):
            yield
    finally:
        timer.cancel()


def shut_busy(http: httpx.Client) -> None:
    """Shut down the sockets of `http`'s connections in use: a stopped attempt's request
    still waiting for its answer's headers (before `watchdog` holds its socket) returns at
    once. httpx shows no socket before the response, so its pool is walked; whatever its
    shape, nothing else is touched."""
    pool = getattr(http, "_transport", None)
    for conn in getattr(getattr(pool, "_pool", None), "connections", ()):
        if conn.is_idle():
            continue
        stream = getattr(getattr(conn, "_connection", None), "_network_stream", None)
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def retry_after(value: str | None) -> float | None:
    """A Retry-After header in seconds (delta-seconds or an HTTP date); None when absent or
    unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _unanswered(exc: Exception) -> bool:
    """A connection the server closed or reset before answering: safe to send again. A
    refused connection is not retried: nothing listens there, and waiting will not help."""
    import httpx

    return isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError)


@dataclass
class Retries:
    """The retries of one attempt's requests, recorded in `metrics.engine.retries`."""

    log: list[dict[str, Any]] = field(default_factory=list)

    def wait(self, reason: str, asked_s: float | None, deadline: float) -> bool:
        """Sleep before the next try and return True; False when the retries are spent or
        the wait would reach `deadline` (perf_counter): the attempt's time is never slept."""
        if len(self.log) >= RETRIES:
            return False
        if asked_s is not None:
            wait = min(asked_s, BACKOFF_CAP_S)
        else:  # jitter: attempts that failed together do not all come back together
            wait = min(BACKOFF_BASE_S * 2 ** len(self.log) * random.uniform(0.5, 1.5),
                       BACKOFF_CAP_S)
        if time.perf_counter() + wait >= deadline:
            return False
        self.log.append({"reason": reason, "wait_s": round(wait, 3),
                         "retry_after_s": asked_s})
        time.sleep(wait)
        return True

    def to_json(self) -> dict[str, Any]:
        return {"count": len(self.log), "tries": list(self.log)}

    def record(self, engine: dict[str, Any]) -> None:
        """Put the retries, if there were any, into a driver's engine data."""
        if self.log:
            engine["retries"] = self.to_json()

    def attach(self, error: DriverError, runtime: Mapping[str, Any]) -> DriverError:
        """`error` with the retries before it kept in its partial output (`runtime`: what
        the result's environment names)."""
        if not self.log or error.partial is not None:
            return error
        tries = f"{len(self.log)} retr{'y' if len(self.log) == 1 else 'ies'}"
        return DriverError(error.kind, f"{error.message} (after {tries})", DriverOutput(
            Transcript(answer=""), Metrics(engine={"retries": self.to_json()}), runtime),
            phase=error.phase)

def with_retries(runtime: Mapping[str, Any],
                 attempt: Callable[[Retries], DriverOutput]) -> DriverOutput:
    """One attempt of an HTTP runtime (`runtime`: its name and base URL, as the result's
    environment names it): an error it ends in keeps the retries made before it."""
    retries = Retries()
    try:
        return attempt(retries)
    except DriverError as exc:
        raise retries.attach(exc, runtime) from None


def with_retries_reply(runtime: Mapping[str, Any],
                       attempt: Callable[[Retries], ToolReply]) -> ToolReply:
    """One tool turn of an HTTP runtime: an error it ends in keeps the retries before it."""
    retries = Retries()
    try:
        return attempt(retries)
    except DriverError as exc:
        raise retries.attach(exc, runtime) from None


def request_json(http: httpx.Client, method: str, url: str, body: Any = None,
                 headers: Mapping[str, str] | None = None,
                 timeout_s: float = 60.0, retries: Retries | None = None,
                 deadline: Deadline | None = None) -> dict[str, Any]:
    """One plain JSON request whose answer is an object; a refused connection, an HTTP error
    or anything but a JSON object → DriverError. It waits at most `timeout_s`, and never past
    the attempt's `deadline` (then a timeout naming the deadline's phase). With `retries`,
    transient errors are retried within that time."""
    import httpx

    if deadline is not None:
        if deadline.expired:
            raise ran_out(deadline, url)
        timeout_s = min(timeout_s, deadline.left())
    limit = Deadline(timeout_s)  # this request's own time, within the attempt's
    until = time.perf_counter() + timeout_s
    while True:
        try:
            with opened(http, method, url, limit, json=body, headers=headers,
                        timeout=request_timeout(max(limit.left(), 0.001))) as response:
                failed = response.status_code >= 400
                content = read_capped(response, ERROR_BODY_CAP if failed else JSON_CAP, url,
                                      cut=failed)
        except httpx.HTTPError as exc:
            if deadline is not None and deadline.expired:
                raise ran_out(deadline, url) from None
            if limit.expired:
                raise DriverError("timeout", f"no answer from {url} within {timeout_s:g} s "
                                  f"({type(exc).__name__})") from None
            if retries and _unanswered(exc) and retries.wait(type(exc).__name__, None, until):
                continue
            raise _transport_error(exc, url, timeout_s) from None
        if response.status_code < 400:
            break
        if retries and response.status_code in RETRY_STATUSES and retries.wait(
                f"HTTP {response.status_code}",
                retry_after(response.headers.get("retry-after")), until):
            continue
        raise DriverError("infra", f"HTTP {response.status_code} from {url}: "
                          f"{server_message(content)}")
    if sum(content.count(b) for b in (b",", b"[", b"{")) > JSON_VALUES_CAP:
        raise DriverError("infra", f"{url} answered with more than {JSON_VALUES_CAP:,} JSON "
                          "values (BenchRig's cap of one answer)")
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise DriverError("infra", f"{url} answered with something that is not a JSON "
                          f"object: {content[:200]!r}")
    return data


MALFORMED = (AttributeError, TypeError, KeyError, ValueError, *NUMERIC_ERRORS)


def malformed(url: str, raw: bytes, exc: Exception) -> DriverError:
    """A stream item whose shape no server documents: the server's fault, said plainly."""
    what = "that is not JSON" if isinstance(exc, json.JSONDecodeError) else "BenchRig cannot read"
    return DriverError("infra", f"{url} sent an item {what} "
                       f"({type(exc).__name__}: {exc}): {raw[:200]!r}")


@dataclass
class StreamRead:
    """Facts about the response as a whole, filled in while its chunks are read."""

    server: str | None = None  # the HTTP Server header
    chunks: int = 0
    bytes: int = 0
    began: float | None = None  # perf_counter when the client started on the request
    dispatched: float | None = None  # … when the request's first byte went on the wire

    def trace(self, event: str, info: Any) -> None:
        """httpcore's trace hook: stamp the moment the request is actually sent. Building
        it and opening the connection come before (about 2 ms in httpx, measured) and are
        not the server's latency."""
        if self.dispatched is None and event.endswith("send_request_headers.started"):
            self.dispatched = time.perf_counter()

    def to_json(self) -> dict[str, Any]:
        setup = (self.dispatched - self.began if self.dispatched and self.began else None)
        return {"chunks": self.chunks, "bytes": self.bytes,
                "setup_ms": setup * 1000 if setup is not None else None}


def post_stream(http: httpx.Client, url: str, body: Any, read: StreamRead,
                deadline: Deadline, headers: Mapping[str, str] | None = None,
                retries: Retries | None = None) -> Iterator[tuple[bytes, float]]:
    """POST and yield (raw chunk, perf_counter when it arrived) as the bytes come in.

    With `retries`, a transient error before the first byte (RETRY_STATUSES, a connection
    closed or reset unanswered) is retried; `read` then times the request that answered.
    Raises DriverError: connection refused or reset (infra), an HTTP error status with the
    server's own message (infra), the attempt's `deadline` passed (timeout, naming its phase).
    """
    import httpx

    while True:
        if deadline.expired:
            raise ran_out(deadline, url)
        read.began, read.dispatched = time.perf_counter(), None
        try:
            with opened(http, "POST", url, deadline, json=body, headers=headers,
                        timeout=request_timeout(max(deadline.left(), 0.001)),
                        extensions={"trace": read.trace}) as response:
                read.server = response.headers.get("server")
                if response.status_code >= 400:
                    message = server_message(read_capped(response, ERROR_BODY_CAP, url,
                                                         cut=True))
                    if (retries and response.status_code in RETRY_STATUSES and retries.wait(
                            f"HTTP {response.status_code}",
                            retry_after(response.headers.get("retry-after")),
                            deadline.on_perf_counter())):
                        continue
                    raise DriverError("infra", f"HTTP {response.status_code} from {url}: "
                                      f"{message}")
                for chunk in capped_body(response, RESPONSE_CAP, url):
                    now = time.perf_counter()
                    read.chunks += 1
                    read.bytes += len(chunk)
                    yield chunk, now
                    if deadline.expired:
                        raise ran_out(deadline, url)
                if deadline.expired:  # the watchdog ended the body: cut, not finished
                    raise ran_out(deadline, url)
                return
        except httpx.HTTPError as exc:
            if deadline.expired:
                raise ran_out(deadline, url) from None
            if (retries and read.chunks == 0 and _unanswered(exc)
                    and retries.wait(type(exc).__name__, None, deadline.on_perf_counter())):
                continue
            raise _transport_error(exc, url, deadline.budget_s) from None


def positive(value: Any) -> float | None:
    """A counter as a number, or None when missing, not a finite number, or not positive."""
    number = finite(value)
    return number if number is not None and number > 0 else None


def count(value: Any) -> int | None:
    """A token count as an int, or None when missing or not a count (never a guessed 0)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LARGEST_COUNT:
        return None
    return value


def as_text(value: Any) -> str | None:
    """A server's name, version or id as a string, or None when it sent something else."""
    return value if isinstance(value, str) else None


def per_second(amount: int | None, duration: float | None, unit: float = 1.0) -> float | None:
    """`amount` per second of a `duration` given in `unit`s of a second (Ollama: ns); None
    when either is unknown or the quotient is not a finite number."""
    if not amount or duration is None:
        return None
    return finite(amount / duration * unit)
