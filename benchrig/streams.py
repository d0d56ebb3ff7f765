"""Incremental SSE and NDJSON decoders: bytes split anywhere in, whole events out.

A network read may end mid-line, mid-UTF-8 character or mid-event, and may carry several
events at once. Both decoders work on bytes and only decode complete lines, so a
multi-byte character split across reads is never seen half. Line ends may be `\\n`,
`\\r\\n` or (SSE only, as the spec allows) a lone `\\r`. NDJSON is split on `\\n` only.
"""

from __future__ import annotations

from dataclasses import dataclass

# Bytes one event (SSE) or line (NDJSON) may gather before it is complete: a server that
# never ends one (no blank line, no newline) would otherwise grow it without end.
EVENT_CAP = 8 << 20


class EventTooLarge(ValueError):
    """An event or line grew past its cap before it was complete."""


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched server-sent event: its `event:` name (None = message) and its data."""

    data: bytes
    event: str | None = None


class SSEDecoder:
    """Feed raw bytes; get the events completed by them (comments and pings are counted).
    An event that gathers more than `limit` bytes raises EventTooLarge."""

    def __init__(self, limit: int = EVENT_CAP) -> None:
        self._tail = b""
        self._held_cr = False
        self._data: list[bytes] = []
        self._pending = 0  # bytes in _data
        self._event: str | None = None
        self.comments = 0
        self.limit = limit

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._held_cr:  # a \r that ended the last read may be the first half of \r\n
            chunk = b"\r" + chunk
            self._held_cr = False
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
            self._held_cr = True
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = (self._tail + chunk).split(b"\n")
        self._tail = lines.pop()
        events: list[SSEEvent] = []
        for line in lines:
            self._line(line, events)
        if self._pending + len(self._tail) > self.limit:
            raise EventTooLarge(f"one event of more than {self.limit >> 20} MiB (no blank "
                                "line ended it)")
        return events

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if not line:  # a blank line dispatches the event gathered so far
            if self._data:
                events.append(SSEEvent(b"\n".join(self._data), self._event))
            self._data, self._event, self._pending = [], None, 0
            return
        if line[0] == 58:  # b":" — a comment, used by servers as a keep-alive ping
            self.comments += 1
            return
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
            self._pending += len(value) + 1
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        # id, retry and unknown fields carry nothing a benchmark needs

    def finish(self) -> tuple[list[SSEEvent], bytes]:
        """End of stream: (events a final line end completes, bytes of an unfinished event).

        Per the SSE spec an event not closed by a blank line is dropped; it is returned
        here so the caller can tell a stream that was cut from one that ended cleanly.
        """
        events: list[SSEEvent] = []
        if self._held_cr:
            self._held_cr = False
            events = self.feed(b"\n")
        unfinished = self._tail
        if self._data:
            unfinished = b"\n".join([b"data: " + d for d in self._data]) + b"\n" + unfinished
        self._tail, self._data, self._event, self._pending = b"", [], None, 0
        return events, unfinished


class NDJSONDecoder:
    """Feed raw bytes; get the complete, non-blank lines (still JSON text, as bytes). A line
    that grows past `limit` bytes raises EventTooLarge."""

    def __init__(self, limit: int = EVENT_CAP) -> None:
        self._tail = b""
        self.limit = limit

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = (self._tail + chunk).split(b"\n")
        self._tail = lines.pop()
        if len(self._tail) > self.limit:
            raise EventTooLarge(f"one line of more than {self.limit >> 20} MiB (no newline "
                                "ended it)")
        return [line for line in lines if line.strip()]

    def finish(self) -> bytes:
        """End of stream: the bytes of a last line that never got its `\\n` (or b"")."""
        tail, self._tail = self._tail, b""
        return tail.strip()
