"""Which TTFTs were measured with other attempts in flight: the flag every view shows."""

from __future__ import annotations

from collections.abc import Iterable

from benchrig.resultio.record import Record

# A TTFT taken while other attempts were in flight includes their queue (`--jobs 4` against
# a one-slot server: 38.7 s against 6.3 s alone); every mean of TTFT says how many it holds.
IN_FLIGHT_NOTE = ("N in flight: that many of the TTFTs in the mean were measured with other "
                  "attempts in flight (settings.in_flight > 1), so they include a queue")


def crowded(result: Record) -> bool:
    """Whether the attempt started with others in flight (absent in older results: no)."""
    count = result.settings.get("in_flight")
    return isinstance(count, int) and not isinstance(count, bool) and count > 1


def crowded_ttft(results: Iterable[Record]) -> int:
    """How many of these attempts have a TTFT measured with others in flight."""
    return sum(crowded(r) and r.metrics.get("ttft_ms") is not None
               for r in results)


def in_flight_text(count: int) -> str:
    """The flag beside a TTFT: empty when none of its attempts shared the server."""
    return f"{count} in flight" if count else ""
