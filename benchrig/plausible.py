"""Plausibility bounds: the one place that says which figures of an attempt are possible."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchrig.jsonsafe import LARGEST_COUNT, finite

# Ceilings far above any real run, so that only a forged or broken figure exceeds them
# (docs/metrics.md#plausibility-bounds says why each is what it is). A value equal to its
# ceiling is kept.
MAX_DECODE_TOKENS_PER_S = 50_000.0  # one stream; the fastest serving today is ~3,000
MAX_PREFILL_TOKENS_PER_S = 1_000_000.0
MAX_INPUT_TOKENS = 1_000_000_000  # a whole agent session sums every turn's context
MAX_COST_USD = 1_000.0  # per attempt
MAX_SECONDS = 7 * 24 * 3600.0  # any duration of one attempt: a week
# Tokens that may carry no text the driver receives (end of turn, template and channel
# markers, a stripped <think> tag): the margin of the byte and wall-time bounds.
TEXTLESS_TOKENS = 64

# figure → (lowest, highest, what it is)
RANGES: dict[str, tuple[float, float, str]] = {
    "wall_s": (0.0, MAX_SECONDS, "s"),
    "ttft_ms": (0.0, MAX_SECONDS * 1000, "ms"),
    "answer_ttft_ms": (0.0, MAX_SECONDS * 1000, "ms"),
    "think_time_s": (0.0, MAX_SECONDS, "s"),
    "load_time_s": (0.0, MAX_SECONDS, "s"),
    "tokens_per_s": (0.0, MAX_DECODE_TOKENS_PER_S, "tokens/s (the decode ceiling)"),
    "prefill_tokens_per_s": (0.0, MAX_PREFILL_TOKENS_PER_S, "tokens/s (the prefill ceiling)"),
    "input_tokens": (0.0, MAX_INPUT_TOKENS, "tokens"),
    "output_tokens": (0.0, LARGEST_COUNT, "tokens"),
    "thinking_tokens": (0.0, LARGEST_COUNT, "tokens"),
    "thinking_chars": (0.0, LARGEST_COUNT, "characters"),
    "cost_usd": (0.0, MAX_COST_USD, "USD (the cap per attempt)"),
}
# A figure derived from others is unknown when one of them is rejected.
DERIVED: dict[str, tuple[str, ...]] = {
    "tokens_per_s": ("output_tokens", "wall_s", "ttft_ms"),
    "think_time_s": ("ttft_ms", "answer_ttft_ms"),
    "thinking_tokens": ("output_tokens",),
}


def shown(number: float) -> str:
    return f"{number:,.6g}"


def rejections(figures: Mapping[str, Any], received_bytes: int | None = None,
               ) -> dict[str, str]:
    """Why each figure of `figures` (a result's `metrics`) is impossible, by name; empty
    when all are plausible. `received_bytes`, when the driver knows it, is the size of all
    the text the model's output reached it as: a token is at least one byte of text."""
    reasons: dict[str, str] = {}
    for name, (low, high, unit) in RANGES.items():
        value = figures.get(name)
        if value is None or (type(value) in (int, float) and low <= value <= high):
            continue  # within its bounds (NaN is not), the usual case: nothing to say
        number = finite(value)
        if number is None:
            reasons[name] = f"{str(value)[:40]} is not a finite number"
        elif not low <= number <= high:
            reasons[name] = f"{shown(number)} is outside {shown(low)}–{shown(high)} {unit}"
    output, wall = figures.get("output_tokens"), figures.get("wall_s")
    if output is not None and "output_tokens" not in reasons:
        # the bytes received where the driver knows them, else the time it had
        if received_bytes is not None:
            if output > received_bytes + TEXTLESS_TOKENS:
                reasons["output_tokens"] = (f"{shown(output)} is more than the "
                                            f"{shown(received_bytes)} bytes received "
                                            f"(+{TEXTLESS_TOKENS} tokens without text)")
        elif (wall is not None and "wall_s" not in reasons
              and output > MAX_DECODE_TOKENS_PER_S * wall + TEXTLESS_TOKENS):
            reasons["output_tokens"] = (
                f"{shown(output)} in {shown(wall)} s is more than the decode ceiling of "
                f"{shown(MAX_DECODE_TOKENS_PER_S)} tokens/s allows "
                f"(+{TEXTLESS_TOKENS} tokens without text)")
    thinking = figures.get("thinking_tokens")
    if (thinking is not None and output is not None and "thinking_tokens" not in reasons
            and "output_tokens" not in reasons and thinking > output):
        reasons["thinking_tokens"] = f"{shown(thinking)} is more than the output_tokens"
    if not reasons:  # the usual case: nothing refused, so nothing derived from a refusal
        return reasons
    for name, sources in DERIVED.items():  # the rejected source is the cause to name
        rejected = [s for s in sources if s in reasons]
        if figures.get(name) is not None and rejected:
            reasons[name] = f"derived from the rejected {rejected[0]}"
    return reasons


class Credible(dict[str, Any]):
    """A result's `metrics` as `credible()` made them: passed to it again, returned as they
    are (a report asks for the same result's figures a dozen times)."""

    __slots__ = ()  # a marker only: no attribute dict a result (a summary holds a million)


def credible(figures: Mapping[str, Any]) -> Credible:
    """A result's `metrics` with every implausible figure unknown (None): what a summary
    may average, whatever an old or hand-edited result file holds. Why each was refused
    joins the file's own `rejected` (figure → why), so that a report can say so."""
    if isinstance(figures, Credible):
        return figures
    reasons = rejections(figures)
    if not reasons:
        return Credible(figures)
    earlier = figures.get("rejected")
    return Credible({**figures, **dict.fromkeys(reasons),
                     "rejected": {**(earlier if isinstance(earlier, dict) else {}), **reasons}})
