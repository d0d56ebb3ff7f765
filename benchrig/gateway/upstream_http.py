"""A small HTTP/1.1 client for an upstream on loopback: one request written in one send,
the reply read as the socket delivers it, so all a read holds is forwarded in one write
(httpx hands over one piece per chunk of the body: a write per token); connections kept
alive per thread."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

READ_SIZE = 1 << 16
MAX_HEAD = 1 << 16


class WireError(Exception):
    """The connection failed or the reply is not HTTP/1.1 as expected."""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Iterator[bytes]  # each item: what one read of the socket delivered, unframed


class _Chunked:
    """Chunked transfer decoding over pieces split anywhere."""

    def __init__(self) -> None:
        self.buffer = b""
        self.left = 0  # bytes of the current chunk still to come
        self.done = False

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        out = []
        while not self.done:
            if self.left:
                take = self.buffer[:self.left]
                out.append(take)
                self.left -= len(take)
                self.buffer = self.buffer[len(take):]
                if self.left:
                    break
                continue
            if self.buffer.startswith(b"\r\n"):
                self.buffer = self.buffer[2:]
            line, sep, rest = self.buffer.partition(b"\r\n")
            if not sep:
                break
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            self.buffer = rest
            if size == 0:
                self.done = True
                break
            self.left = size
        return b"".join(out)


class Pool:
    """Keep-alive connections to one host, one per thread."""

    def __init__(self, base_url: str, timeout_s: float, connect_timeout_s: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"{base_url}: the wire client speaks plain http only")
        self.host, self.port = parts.hostname, parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout_s, self.connect_timeout_s = timeout_s, connect_timeout_s
        self._local = threading.local()

    def _connect(self) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), self.connect_timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(self.timeout_s)
        return sock

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        head = (f"POST {self.prefix}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Length: {len(body)}\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
        sock: socket.socket | None = getattr(self._local, "sock", None)
        self._local.sock = None  # taken: it returns only once its reply is read whole
        for attempt in (0, 1):
            if sock is None:
                sock = self._connect()
            try:
                sock.sendall(head + body)
                first = sock.recv(READ_SIZE)
                if first:
                    return self._reply(sock, first)
            except (ConnectionResetError, BrokenPipeError):
                if attempt:
                    raise
            sock.close()  # a kept connection the server had closed: once more, fresh
            sock = None
        raise WireError("the upstream closed the connection without a reply")

    def _reply(self, sock: socket.socket, data: bytes) -> Reply:
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_HEAD:
                raise WireError("the upstream's reply headers are too long")
            more = sock.recv(READ_SIZE)
            if not more:
                raise WireError("the upstream closed the connection mid-headers")
            data += more
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split(" ", 2)[1])
        except (IndexError, ValueError):
            raise WireError(f"not an HTTP reply: {lines[0][:80]!r}") from None
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return Reply(status, headers, self._body(sock, headers, rest))

    def _body(self, sock: socket.socket, headers: dict[str, str], rest: bytes
              ) -> Iterator[bytes]:
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = None if chunked else int(headers.get("content-length") or -1)
        decoder = _Chunked() if chunked else None
        keep = headers.get("connection", "").lower() != "close" and (chunked or length != -1)
        got = 0
        data = rest
        complete = False
        try:
            while True:
                if data:
                    if decoder is not None:
                        piece = decoder.feed(data)
                    else:
                        piece = data if length is None or length < 0 else data[:length - got]
                        got += len(piece)
                    if piece:
                        yield piece
                finished = decoder.done if decoder is not None else 0 <= (length or 0) <= got \
                    and length != -1
                if finished:
                    complete = True
                    break
                data = sock.recv(READ_SIZE)
                if not data:
                    keep = False
                    if length is None or length >= 0:
                        raise WireError("the upstream closed the connection mid-body")
                    complete = True
                    break
        finally:
            # a reply read whole leaves its connection for the next request; one cut short
            # (the client hung up) is closed, never reused mid-reply
            if keep and complete:
                self._local.sock = sock
            else:
                sock.close()
