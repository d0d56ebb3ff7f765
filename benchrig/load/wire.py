"""One streamed chat completion over a raw asyncio connection, timed at every chunk."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import orjson

from benchrig.jsonsafe import LARGEST_COUNT, finite
from benchrig.streams import EventTooLarge, SSEDecoder
from benchrig.textsafe import NAME_CAP, printable

HEAD_CAP = 64 << 10  # bytes of status line and headers
RESPONSE_CAP = 64 << 20  # bytes of one body, as drivers/httpstream.py caps a stream
ERROR_CHARS = 300  # of a server's error text kept in a level's error list
READ_SIZE = 64 << 10
# A text chunk carries at least one token: more text chunks than the budget asked for
# (plus the tokens a stream may send without text) is a server that does not stop.
TEXTLESS_TOKENS = 64


@dataclass(frozen=True)
class Endpoint:
    """Where the requests go: host, port, TLS, and the chat completions path."""

    host: str
    port: int
    tls: bool
    path: str

    @classmethod
    def of(cls, base_url: str) -> Endpoint:
        """`http://host:port/v1` → the endpoint of `/v1/chat/completions`."""
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {printable(base_url, NAME_CAP)}")
        tls = parts.scheme == "https"
        return cls(parts.hostname, parts.port or (443 if tls else 80), tls,
                   parts.path.rstrip("/") + "/chat/completions")


@dataclass
class Record:
    """One request as measured: times are perf_counter seconds from its dispatch."""

    dispatched: float = 0.0  # perf_counter at the first byte written
    # A chunk is what one socket read brought: the text events it completed arrived at the
    # same instant as far as any client can tell (a late read coalesces several writes).
    chunks: list[float] = field(default_factory=list)  # each text chunk's arrival
    chars: list[int] = field(default_factory=list)  # each text chunk's characters
    events: list[int] = field(default_factory=list)  # text events in each chunk
    tokens: list[int] = field(default_factory=list)  # per chunk, from streamed usage
    end: float | None = None  # the stream's end ([DONE] or the last byte)
    usage_output: int | None = None
    usage_input: int | None = None
    received_bytes: int = 0  # text bytes of the answer (a token is at least one)
    text_events: int = 0  # events that carried text (each at least one token)
    error: str | None = None  # None: completed
    error_kind: str | None = None  # connect, status, stream, timeout, protocol, cut

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.chunks)


class Failed(Exception):
    """The request failed: `kind` and a printable message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


async def _head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise Failed("protocol", f"response headers over {HEAD_CAP >> 10} KiB") from None
    except asyncio.IncompleteReadError:
        raise Failed("cut", "the connection closed before a response") from None
    lines = raw.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or not status[0].startswith("HTTP/") or not status[1].isdigit():
        raise Failed("protocol", f"not an HTTP response: {printable(lines[0], 80)}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status[1]), headers


async def _body(reader: asyncio.StreamReader, headers: dict[str, str]
                ) -> AsyncIterator[bytes]:
    """The body's bytes as they arrive (chunked, sized or up to the close), capped."""
    total = 0

    def counted(data: bytes) -> bytes:
        nonlocal total
        total += len(data)
        if total > RESPONSE_CAP:
            raise Failed("protocol", f"a body of more than {RESPONSE_CAP >> 20} MiB")
        return data

    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            try:
                size_line = await reader.readuntil(b"\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                raise Failed("cut", "the stream ended inside a chunk header") from None
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise Failed("protocol", "a malformed chunk size") from None
            if size == 0:
                return
            left = size
            while left:
                data = await reader.read(min(left, READ_SIZE))
                if not data:
                    raise Failed("cut", "the stream ended inside a chunk")
                left -= len(data)
                yield counted(data)
            await reader.readexactly(2)
    elif "content-length" in headers:
        try:
            left = int(headers["content-length"])
        except ValueError:
            raise Failed("protocol", "a malformed Content-Length") from None
        while left > 0:
            data = await reader.read(min(left, READ_SIZE))
            if not data:
                raise Failed("cut", "the body ended before its Content-Length")
            left -= len(data)
            yield counted(data)
    else:
        while data := await reader.read(READ_SIZE):
            yield counted(data)


@cache
def _tls() -> ssl.SSLContext:
    """One TLS context per process: making one costs 50–100 ms of CPU (drivers/httpstream.py
    measured it), which 64 streams would pay while they are timed."""
    return ssl.create_default_context()


def request_bytes(endpoint: Endpoint, body: dict[str, Any], api_key: str | None) -> bytes:
    payload = json.dumps(body).encode()
    auth = f"Authorization: Bearer {api_key}\r\n" if api_key else ""
    return (f"POST {endpoint.path} HTTP/1.1\r\nHost: {endpoint.host}:{endpoint.port}\r\n"
            f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"Accept-Encoding: identity\r\n{auth}Content-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n").encode() + payload


def _count(value: Any) -> int | None:
    number = finite(value)
    return int(number) if number is not None and 0 <= number <= LARGEST_COUNT else None


def _event(data: bytes, record: Record, now: float, budget: int) -> bool:
    """Read one SSE event into `record`; True at the end marker."""
    if data.strip() == b"[DONE]":
        return True
    try:  # orjson: a third of json's CPU per event; what it refuses (an integer past 64
        # bits, NaN) json reads as it always did
        chunk = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            raise Failed("protocol", "an event that is not JSON") from None
    if not isinstance(chunk, dict):
        raise Failed("protocol", "an event that is not a JSON object")
    if "error" in chunk:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise Failed("stream", f"the server's error: {printable(str(message), ERROR_CHARS)}")
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        record.usage_output = _count(usage.get("completion_tokens"))
        record.usage_input = _count(usage.get("prompt_tokens"))
    choices = chunk.get("choices")
    delta = choices[0].get("delta") if isinstance(choices, list) and choices and isinstance(
        choices[0], dict) else None
    if not isinstance(delta, dict):
        return False
    text = "".join(part for key in ("content", "reasoning_content", "reasoning")
                   if isinstance(part := delta.get(key), str))
    if not text:
        return False
    at = now - record.dispatched
    if record.chunks and record.chunks[-1] == at:  # the same read: the same chunk
        record.chars[-1] += len(text)
        record.events[-1] += 1
    else:
        record.chunks.append(at)
        record.chars.append(len(text))
        record.events.append(1)
    record.received_bytes += len(text.encode("utf-8", "replace"))
    if isinstance(usage, dict) and record.usage_output is not None:
        # streamed usage: cumulative, the chunk's latest
        if len(record.tokens) == len(record.chunks):
            record.tokens[-1] = record.usage_output
        else:
            record.tokens.append(record.usage_output)
    record.text_events += 1
    if record.text_events > budget + TEXTLESS_TOKENS:
        raise Failed("protocol", f"more than {budget} + {TEXTLESS_TOKENS} text events for "
                                 f"max_tokens {budget}: the server does not stop")
    return False


async def stream_chat(endpoint: Endpoint, body: dict[str, Any], timeout_s: float,
                      api_key: str | None = None,
                      tls: ssl.SSLContext | None = None) -> Record:
    """Send one streamed chat completion and time it; never raises for what the server
    does (a refused connection, a status, a cut stream, a timeout: `record.error`)."""
    record = Record()
    budget = int(body.get("max_tokens") or LARGEST_COUNT)
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout_s):
            try:
                reader, writer = await asyncio.open_connection(
                    endpoint.host, endpoint.port, limit=HEAD_CAP,
                    ssl=(tls or _tls()) if endpoint.tls else None)
            except OSError as exc:
                raise Failed("connect", f"cannot connect: {printable(str(exc), 200)}") from None
            record.dispatched = time.perf_counter()
            writer.write(request_bytes(endpoint, body, api_key))
            status, headers = await _head(reader)
            if status != 200:
                text = b""
                async for data in _body(reader, headers):
                    text += data
                    if len(text) > ERROR_CHARS * 4:
                        break
                raise Failed("status", f"HTTP {status}: "
                             f"{printable(text.decode('utf-8', 'replace'), ERROR_CHARS)}")
            decoder = SSEDecoder()
            done = False
            async for data in _body(reader, headers):
                now = time.perf_counter()
                try:
                    events = decoder.feed(data)
                except EventTooLarge as exc:
                    raise Failed("protocol", str(exc)) from None
                for event in events:
                    if _event(event.data, record, now, budget):
                        done = True
                        record.end = now - record.dispatched
                        break
                if done:
                    break
            if not done:
                raise Failed("cut", "the stream ended without [DONE]")
    except Failed as exc:
        record.error, record.error_kind = str(exc), exc.kind
    except TimeoutError:
        record.error, record.error_kind = f"no complete answer in {timeout_s:g} s", "timeout"
    except (OSError, asyncio.IncompleteReadError) as exc:
        record.error, record.error_kind = (f"the connection failed: "
                                           f"{printable(str(exc) or type(exc).__name__, 200)}",
                                           "cut")
    finally:
        if writer is not None:
            writer.close()
    if record.error is None and not record.chunks:
        record.error, record.error_kind = "the stream carried no text", "empty"
    return record
