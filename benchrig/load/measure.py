"""One request's figures from its record: TTFT, E2E, output tokens (with their source), the
per-request output rate, and its inter-token latencies, multi-token chunks spread."""

from __future__ import annotations

from dataclasses import dataclass

from benchrig.load.wire import TEXTLESS_TOKENS, Record

SPAN_FLOOR_S = 0.001  # as metrics.py floors tokens_per_s's denominator


@dataclass(frozen=True)
class Measured:
    """A completed request's figures (milliseconds, tokens, tokens/s)."""

    ttft_ms: float
    e2e_ms: float
    output_tokens: int
    tokens_source: str  # server | counted
    tokens_per_s: float
    itl_ms: tuple[float, ...]  # one per token after the first chunk's
    input_tokens: int | None

    @property
    def itl_mean_ms(self) -> float | None:
        """(E2E − TTFT) ÷ (tokens − 1), as llmperf's fixed ITL and vLLM's TPOT: defined for
        an answer that arrived in one chunk too; None for one token."""
        if self.output_tokens < 2:
            return None
        return (self.e2e_ms - self.ttft_ms) / (self.output_tokens - 1)


def chunk_tokens(record: Record) -> tuple[list[int], str]:
    """Tokens in each text chunk, and where the count comes from. Streamed usage (vLLM's
    continuous_usage_stats) gives each chunk's own count; a final server total larger than
    the chunks is spread over them by their text (largest remainder, at least one per text
    event each), as llmperf's and vLLM's ITL fixes spread a multi-token chunk; else one per
    text event. A server total is believed only when the text could hold it (a token is at
    least one byte, plus TEXTLESS_TOKENS that carry none) and it is not below the events."""
    n = len(record.chunks)
    if len(record.tokens) == n and n and all(b >= a for a, b in zip(
            [0, *record.tokens], record.tokens, strict=False)):
        counts = [b - a for a, b in zip([0, *record.tokens], record.tokens, strict=False)]
        if all(counts) and record.tokens[-1] <= record.received_bytes + TEXTLESS_TOKENS:
            return counts, "server"
    events = record.events if len(record.events) == n else [1] * n
    total = record.usage_output
    if total is None or not sum(events) <= total <= record.received_bytes + TEXTLESS_TOKENS:
        return list(events), "counted"
    chars = sum(record.chars) or n
    extra = total - sum(events)
    shares = [extra * c / chars for c in record.chars]
    counts = [e + int(s) for e, s in zip(events, shares, strict=True)]
    left = total - sum(counts)
    for i in sorted(range(n), key=lambda i: shares[i] - int(shares[i]), reverse=True)[:left]:
        counts[i] += 1
    return counts, "server"


def measured(record: Record) -> Measured:
    """The figures of a completed request (`record.ok`)."""
    assert record.chunks and record.end is not None
    counts, source = chunk_tokens(record)
    ttft = record.chunks[0]
    itl: list[float] = []
    for i in range(1, len(record.chunks)):
        gap = (record.chunks[i] - record.chunks[i - 1]) * 1000 / counts[i]
        itl.extend([gap] * counts[i])
    tokens = sum(counts)
    span = max(record.end - ttft, SPAN_FLOOR_S)
    return Measured(ttft * 1000, record.end * 1000, tokens, source, tokens / span,
                    tuple(itl), record.usage_input)
