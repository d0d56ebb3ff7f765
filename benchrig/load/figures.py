"""A level's figures: its distributions, throughput, goodput and errors, as the result's
`evidence.load` and `metrics` record them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchrig.load.distributions import distribution, meets
from benchrig.load.engine import LevelRun
from benchrig.load.measure import Measured, measured

# Raw samples kept per figure for compare's bootstrap: evenly thinned past this, so a long
# level's result stays far below the result file cap.
SAMPLES_CAP = 4000
ERROR_EXAMPLES = 5


def thinned(values: Sequence[float], cap: int = SAMPLES_CAP) -> list[float]:
    """At most `cap` of `values`, evenly spaced (every value when there are fewer), rounded
    to the microsecond."""
    if len(values) > cap:
        step = len(values) / cap
        values = [values[int(i * step)] for i in range(cap)]
    return [round(v, 3) for v in values]


def _source(done: list[Measured]) -> str | None:
    sources = {m.tokens_source for m in done}
    return None if not sources else sources.pop() if len(sources) == 1 else "counted"


def level_figures(run: LevelRun, slo: Mapping[str, float]) -> dict[str, Any]:
    """`evidence.load`'s figures of one level (the sweep's own fields are added by the
    caller)."""
    done = [measured(r) for r in run.records if r.ok]
    failed = [r for r in run.records if not r.ok]
    ttft = [m.ttft_ms for m in done]
    e2e = [m.e2e_ms for m in done]
    rates = [m.tokens_per_s for m in done]
    itl = [x for m in done for x in m.itl_ms]
    tokens = sum(m.output_tokens for m in done)
    duration = max(run.duration_s, 1e-9)
    good = sum(meets({"ttft_ms": m.ttft_ms, "itl_mean_ms": m.itl_mean_ms,
                      "e2e_ms": m.e2e_ms}, slo) for m in done) if slo else None
    warm_ok = [measured(r) for r in run.warmup if r.ok]
    inputs = [m.input_tokens for m in done if m.input_tokens is not None]
    figures: dict[str, Any] = {
        "requests": len(run.records),
        "completed": len(done),
        "errors": len(failed),
        "error_kinds": dict(Counter(r.error_kind or "unknown" for r in failed)),
        "error_examples": list(dict.fromkeys(r.error or "" for r in failed))[:ERROR_EXAMPLES],
        "warmup": {"requests": len(run.warmup), "errors": len(run.warmup) - len(warm_ok),
                   "ttft_ms": [round(m.ttft_ms, 3) for m in warm_ok]},
        "duration_s": round(run.duration_s, 6),
        "request_throughput": len(done) / duration,
        "output_tokens_per_s": tokens / duration,
        "output_tokens": tokens,
        "output_tokens_source": _source(done),
        "input_tokens": sum(inputs) if inputs and len(inputs) == len(done) else None,
        "ttft_ms": distribution(ttft),
        "itl_ms": distribution(itl),
        "e2e_ms": distribution(e2e),
        "tokens_per_s": distribution(rates),
        "goodput": None if good is None else {
            "slo": dict(slo), "requests": good, "share": good / len(run.records)
            if run.records else None, "per_s": good / duration},
        "max_in_flight": run.max_in_flight,
        "schedule_lag_ms": distribution(run.lag_ms) if run.lag_ms else None,
        "samples": {"ttft_ms": thinned(ttft), "e2e_ms": thinned(e2e),
                    "tokens_per_s": thinned(rates), "itl_ms": thinned(itl)},
    }
    return figures


def level_metrics(figures: Mapping[str, Any]) -> dict[str, Any]:
    """The result's `metrics` for a level: the level's span, its median TTFT and median
    per-request rate (one stream's figures, as every other suite's), its token totals."""
    ttft, rate = figures["ttft_ms"], figures["tokens_per_s"]
    return {
        "wall_s": figures["duration_s"], "ttft_ms": ttft["p50"],
        "tokens_per_s": rate["p50"], "input_tokens": figures["input_tokens"],
        "output_tokens": figures["output_tokens"] if figures["completed"] else None,
        "cost_usd": None, "answer_ttft_ms": None, "think_time_s": None,
        "thinking_chars": None, "tokens_per_s_floored": False,
        "prefill_tokens_per_s": None,
        "input_tokens_source": "server" if figures["input_tokens"] is not None else None,
        "output_tokens_source": figures["output_tokens_source"], "cost_source": None,
        "load_time_s": None, "engine": None, "check_s": None,
    }
