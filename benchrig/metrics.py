"""One definition of every timing and token figure, shared by all drivers (public for plugin
drivers: `measured` and `StreamCollector`; the rest is private to BenchRig)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from benchrig.core.measurements import Metrics, TokenSource
from benchrig.jsonsafe import finite
from benchrig.plausible import DERIVED, Credible, credible, rejections
from benchrig.thinking import ThinkSplitter

__all__ = ["StreamCollector", "measured"]  # the rest is BenchRig's own (see the docstring)

TOKENS_PER_S_FLOOR_S = 0.001


def measured(*, wall_s: float | None, ttft_ms: float | None, answer_ttft_ms: float | None,
             thinking_chars: int | None, output_tokens: int | None,
             output_source: TokenSource | None, input_tokens: int | None,
             input_source: TokenSource | None, engine: dict[str, Any],
             prefill_tokens_per_s: float | None = None, cost_usd: float | None = None,
             cost_source: str | None = None, load_time_s: float | None = None,
             received_bytes: int | None = None,
             rejected: Mapping[str, str] | None = None,
             partial: Mapping[str, str] | None = None,
             decode_end_s: float | None = None) -> Metrics:
    """Metrics from what a driver observed: the decode rate, its floor and the thinking
    time derived here, once for every driver; a token source only beside a known count.
    A figure outside the plausibility bounds (plausible.py) is null, and why is in
    `rejected`, beside what the driver itself already `rejected`. `received_bytes`: the
    size of all the output text the driver received, when every generated token reaches it
    as text (no hidden reasoning). `partial`: figures that cover only part of the attempt
    (figure → why); `decode_end_s`, when given, ends the decode span of `tokens_per_s` (the
    part the output tokens cover) instead of `wall_s`."""
    rate, floored = decode_rate(output_tokens, wall_s if decode_end_s is None else decode_end_s,
                                ttft_ms)
    figures: dict[str, Any] = {
        "wall_s": wall_s, "ttft_ms": ttft_ms, "answer_ttft_ms": answer_ttft_ms,
        "think_time_s": think_time(ttft_ms, answer_ttft_ms), "thinking_chars": thinking_chars,
        "tokens_per_s": rate, "prefill_tokens_per_s": prefill_tokens_per_s,
        "input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost_usd,
        "load_time_s": load_time_s}
    reasons = {**(rejected or {}), **rejections(figures, received_bytes)}
    kept = {**figures, **{name: None for name in reasons if name in figures}}
    return Metrics(
        **kept, tokens_per_s_floored=floored and kept["tokens_per_s"] is not None,
        input_tokens_source=input_source if kept["input_tokens"] is not None else None,
        output_tokens_source=output_source if kept["output_tokens"] is not None else None,
        cost_source=cost_source, engine=engine, rejected=reasons,
        partial={name: why for name, why in (partial or {}).items()
                 if kept.get(name) is not None})


def decode_rate(output_tokens: int | None, wall_s: float | None,
                ttft_ms: float | None) -> tuple[float | None, bool]:
    """`output_tokens / (wall_s − ttft_s)` with the 0.001 s floor; returns (rate, floored)."""
    if output_tokens is None or wall_s is None or ttft_ms is None:
        return None, False
    span = wall_s - ttft_ms / 1000.0
    floored = span < TOKENS_PER_S_FLOOR_S
    return output_tokens / max(span, TOKENS_PER_S_FLOOR_S), floored


def think_time(ttft_ms: float | None, answer_ttft_ms: float | None) -> float | None:
    if ttft_ms is None or answer_ttft_ms is None:
        return None
    return max(0.0, (answer_ttft_ms - ttft_ms) / 1000.0)


def with_thinking_tokens(metrics: Metrics, thinking: str, answer: str) -> Metrics:
    """Fill `thinking_tokens` when the driver did not: 0 without thinking, else the share
    of `output_tokens` that the thinking has of the characters (`estimated`)."""
    if metrics.thinking_tokens is not None or metrics.output_tokens is None:
        return metrics
    if not thinking:
        return replace(metrics, thinking_tokens=0, thinking_tokens_source=metrics.
                       output_tokens_source)
    share = len(thinking) / (len(thinking) + len(answer))
    return replace(metrics, thinking_tokens=round(metrics.output_tokens * share),
                   thinking_tokens_source="estimated")


def mean_known(values: Iterable[float | int | None]) -> float | None:
    """The mean of the values that are known and finite; None when none is (unknown is
    never 0). Figures from results go through `credible()` first: see `mean_metric`."""
    present = [number for number in map(finite, values) if number is not None]
    return math.fsum(present) / len(present) if present else None  # statistics.fmean's sum


def mean_metric(metrics: Iterable[Mapping[str, Any]], name: str) -> float | None:
    """The mean of one figure over results' `metrics`, leaving out every value outside
    the plausibility bounds (an old or hand-edited result file cannot bend a table)."""
    return mean_known(credible(m).get(name) for m in metrics)


def caveat(metrics: Iterable[Mapping[str, Any]], name: str) -> str:
    """What a mean of figure `name` over these metrics leaves out or takes as a lower bound:
    `N partial` (the figure covers only part of an attempt, e.g. an agent's figures before its
    first tool ran), `N rejected` (a figure the driver had was impossible or not trusted, so
    the mean lacks that attempt); empty when neither."""
    causes = (name, *DERIVED.get(name, ()))
    partial = rejected = 0
    for m in metrics:
        marked, refused = m.get("partial"), m.get("rejected")
        if marked and name in marked and credible(m).get(name) is not None:
            partial += 1
        elif ((refused and any(cause in refused for cause in causes))
              # an old or hand-edited result file with an impossible figure
              or (not isinstance(m, Credible) and m.get(name) is not None
                  and credible(m).get(name) is None)):
            rejected += 1
    return ", ".join(f"{n} {what}" for n, what in ((partial, "partial"), (rejected, "rejected"))
                     if n)


def any_floored(metrics: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a mean of `tokens_per_s` over these metrics includes a floored rate."""
    return any(m.get("tokens_per_s_floored") for m in map(credible, metrics)
               if m.get("tokens_per_s") is not None)  # a lean record has no unknowns


class StreamCollector:
    """Streamed deltas → answer, thinking and tool calls, with the first time of each.

    Thinking arrives in a separate field or inline as <think>…</think> in the content;
    both count the same. A tool call is an answer token (protocols.md §0).
    """

    def __init__(self, dispatched: float) -> None:
        self.dispatched = dispatched  # may be corrected by finish()
        self.splitter = ThinkSplitter()
        self.first_tool: float | None = None
        self.token_events = 0  # events that carried any text or tool call
        self.received_bytes = 0  # UTF-8 bytes of thinking, answer and tool calls received
        self.ended: float | None = None

    def delta(self, now: float, content: str | None = None, reasoning: str | None = None,
              tool_call: bool = False, tool_bytes: int = 0) -> None:
        carried = False
        if reasoning:
            self.splitter.thinking_delta(reasoning, now)
            self.received_bytes += len(reasoning.encode("utf-8", "surrogatepass"))
            carried = True
        if content:
            self.splitter.feed(content, now)
            self.received_bytes += len(content.encode("utf-8", "surrogatepass"))
            carried = True
        self.received_bytes += tool_bytes
        if tool_call:
            self.first_tool = self.first_tool if self.first_tool is not None else now
            carried = True
        self.token_events += carried

    def finish(self, now: float, dispatched: float | None = None) -> None:
        """End of stream at `now`; `dispatched`, when known, is when the request really left."""
        self.dispatched = dispatched or self.dispatched
        self.splitter.finish(now)
        self.ended = now

    def _since_dispatch_ms(self, *times: float | None) -> float | None:
        known = [t for t in times if t is not None]
        return (min(known) - self.dispatched) * 1000 if known else None

    @property
    def ttft_ms(self) -> float | None:
        return self._since_dispatch_ms(self.splitter.first_any, self.first_tool)

    @property
    def answer_ttft_ms(self) -> float | None:
        return self._since_dispatch_ms(self.splitter.first_answer, self.first_tool)

    def metrics(self, output_tokens: int | None, output_source: TokenSource | None,
                input_tokens: int | None, input_source: TokenSource | None,
                prefill_tokens_per_s: float | None, engine: dict[str, Any],
                load_time_s: float | None = None, cost_usd: float | None = None,
                cost_source: str | None = None, received_bytes: int | None = None,
                ) -> Metrics:
        """The one metric definition (metrics.py) applied to what this stream carried."""
        assert self.ended is not None, "finish() first"
        return measured(
            wall_s=self.ended - self.dispatched, ttft_ms=self.ttft_ms,
            answer_ttft_ms=self.answer_ttft_ms, thinking_chars=len(self.splitter.thinking),
            output_tokens=output_tokens, output_source=output_source,
            input_tokens=input_tokens, input_source=input_source, engine=engine,
            prefill_tokens_per_s=prefill_tokens_per_s, cost_usd=cost_usd,
            cost_source=cost_source, load_time_s=load_time_s, received_bytes=received_bytes)
