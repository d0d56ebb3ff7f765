"""An attempt's figures of record from its session's calls, and the agent's own figures
kept beside them as `reported_*`, with each disagreement beyond the tolerance flagged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from benchrig.core.measurements import TokenSource, reported_source
from benchrig.core.transcript import DriverOutput
from benchrig.gateway.metering import CallRecord, reached_model
from benchrig.metrics import measured
from benchrig.plausible import rejections

# A reported count within max(5 %, 16 tokens) of the measured one agrees: an agent may add
# a few tokens (a stop marker, its own estimate of a reply it did not get usage for);
# beyond that one of the two is wrong. A cost agrees within max(5 %, $0.0001).
TOKEN_TOLERANCE = (0.05, 16)
COST_TOLERANCE = (0.05, 0.0001)
TOLERANCE_NOTE = "5 % or 16 tokens, whichever is larger; a cost 5 % or $0.0001"
RANK: dict[str, int] = {"server": 0, "counted": 1, "estimated": 2}


def _sum(values: Sequence[int | float | None]) -> Any:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _source(calls: Sequence[CallRecord]) -> TokenSource | None:
    """The weakest source among the calls that reached a model (a sum is as good as its
    worst part; a call refused before any model saw it added exact zeros, no part)."""
    sources = [c.tokens_source for c in calls if reached_model(c)]
    if not sources:
        return "server"
    if any(s is None for s in sources):
        return None
    worst = max(sources, key=lambda s: RANK.get(str(s), 3))
    return worst if worst in RANK else None  # type: ignore[return-value]


def summarize(calls: Sequence[CallRecord]) -> dict[str, Any]:
    """Totals over a session: tokens and cost summed (unknown if any call's is), the first
    call's TTFT, prefill and decode rates over the calls that have them."""
    outputs = [c.output_tokens for c in calls]
    inputs = [c.input_tokens for c in calls]
    costs = [c.cost_usd for c in calls]
    decoded, decode_s, prefilled, prefill_s = 0, 0.0, 0, 0.0
    for c in calls:  # rates over the calls that have them, weighted by their tokens
        if c.decode_tokens_per_s and c.output_tokens:
            decoded += c.output_tokens
            decode_s += c.output_tokens / c.decode_tokens_per_s
        if c.prefill_tokens_per_s and c.input_tokens:
            prefilled += c.input_tokens
            prefill_s += c.input_tokens / c.prefill_tokens_per_s
    first = next((c for c in calls if c.ttft_ms is not None), None)
    answered = next((c for c in calls if c.answer_ttft_ms is not None), None)
    cost = _sum(costs)
    sources = sorted({c.cost_source for c in calls})
    return {
        "calls": len(calls), "ttft_ms": first.ttft_ms if first else None,
        "ttft_basis": first.ttft_basis if first else None,
        # the first call's first answer token (its thinking before it is think_time); a
        # first call that only thought gives its first token
        "answer_ttft_ms": (answered.answer_ttft_ms if answered is first and answered
                           else first.ttft_ms if first else None),
        "thinking_chars": sum(c.thinking_chars for c in calls),
        "input_tokens": _sum(inputs), "output_tokens": _sum(outputs),
        "tokens_source": _source(calls),
        "decode_tokens_per_s": decoded / decode_s if decode_s > 0 else None,
        "prefill_tokens_per_s": prefilled / prefill_s if prefill_s > 0 else None,
        "cost_usd": cost if calls else 0.0,
        "cost_source": "; ".join(sources) if calls else "no model call was made",
        "tool_calls": sum(len(c.tool_calls) for c in calls),
        "finish_reasons": [c.finish_reason for c in calls],
        "request_bytes": sum(c.request_bytes for c in calls),
        "response_bytes": sum(c.response_bytes for c in calls),
        "failed_calls": sum(c.status != "ok" for c in calls),
    }


def _disagrees(reported: Any, measured_value: Any, tolerance: tuple[float, float]) -> bool:
    if reported is None or measured_value is None:
        return False
    share, floor = tolerance
    return bool(abs(reported - measured_value) > max(share * measured_value, floor))


def with_gateway_figures(output: DriverOutput, calls: Sequence[CallRecord],
                         agent: str) -> DriverOutput:
    """The attempt's output with its figures of record taken from the gateway's calls; what
    the agent reported goes to `reported_*`, and a disagreement is flagged. Nothing the agent
    printed (or a tool wrote to its stdout) reaches a figure of record."""
    old = output.metrics
    totals = summarize(calls)
    # what the agent's parser said of its own figures (a lower bound, refused) describes
    # the reported_* figures now, not the measured ones
    engine = {**old.engine, "gateway": {**totals, "tolerance": TOLERANCE_NOTE,
                                        "reported_partial": dict(old.partial),
                                        "reported_rejected": dict(old.rejected),
                                        "calls_detail": [c.to_json() for c in calls]}}
    source = totals["tokens_source"]
    metrics = measured(
        wall_s=old.wall_s, ttft_ms=totals["ttft_ms"], answer_ttft_ms=totals["answer_ttft_ms"],
        thinking_chars=totals["thinking_chars"], output_tokens=totals["output_tokens"],
        output_source=source, input_tokens=totals["input_tokens"], input_source=source,
        engine=engine, prefill_tokens_per_s=totals["prefill_tokens_per_s"],
        cost_usd=totals["cost_usd"], cost_source=totals["cost_source"],
        load_time_s=old.load_time_s)
    rate = totals["decode_tokens_per_s"]
    refused = rejections({"tokens_per_s": rate}) if rate is not None else {}
    metrics = replace(metrics, tokens_per_s=None if refused else rate,
                      tokens_per_s_floored=False,
                      rejected={**metrics.rejected, **refused})
    reported = {"ttft_ms": old.ttft_ms, "input_tokens": old.input_tokens,
                "output_tokens": old.output_tokens, "cost_usd": old.cost_usd,
                "cost_source": old.cost_source, "source": reported_source(agent)}
    flagged = {}
    for name, tolerance in (("input_tokens", TOKEN_TOLERANCE),
                            ("output_tokens", TOKEN_TOLERANCE), ("cost_usd", COST_TOLERANCE)):
        # once the agent's parser stopped counting (at its first tool: old.partial), every
        # count it reported is a lower bound, which disagrees only by exceeding the measure
        low = bool(old.partial)
        if _disagrees(reported[name], getattr(metrics, name), tolerance) and (
                not low or reported[name] > getattr(metrics, name)):
            flagged[name] = (f"{agent} reported {reported[name]}, the gateway measured "
                             f"{getattr(metrics, name)} (tolerance {TOLERANCE_NOTE})")
    metrics = replace(metrics, reported=reported, disagreement=flagged)
    return replace(output, metrics=metrics)


