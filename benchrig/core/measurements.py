"""Metrics: the figures of one attempt (benchrig/metrics.py computes them, once for all)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

TokenSource = Literal["server", "counted", "estimated"]


def reported_source(agent: str) -> str:
    """Where an agent's own figures (`reported_*`) were read, one wording for every path: its
    own output (event stream, chat history or trajectory file), which it or a tool wrote."""
    return f"{agent}'s own output"


@dataclass(frozen=True)
class Metrics:
    """Figures of one attempt; None means unknown, never zero by default."""

    wall_s: float | None = None
    ttft_ms: float | None = None
    answer_ttft_ms: float | None = None
    think_time_s: float | None = None
    thinking_chars: int | None = None
    tokens_per_s: float | None = None
    tokens_per_s_floored: bool = False
    prefill_tokens_per_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_source: TokenSource | None = None
    output_tokens_source: TokenSource | None = None
    cost_usd: float | None = None
    cost_source: str | None = None
    load_time_s: float | None = None
    engine: dict[str, Any] = field(default_factory=dict)
    thinking_tokens: int | None = None
    thinking_tokens_source: TokenSource | None = None
    # figure → why the value the driver had is impossible (plausible.py); it is null
    rejected: dict[str, str] = field(default_factory=dict)
    # what the agent said of itself beside the measured figures (`reported_<figure>`), and
    # each figure where the two disagree beyond the tolerance (docs/metrics.md#the-gateway)
    reported: dict[str, Any] = field(default_factory=dict)
    disagreement: dict[str, str] = field(default_factory=dict)
    # figure → why it covers only part of the attempt (a lower bound: an agent's figures
    # reported before its first tool ran); kept, and marked in summaries
    partial: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(replace(self, engine={}))  # asdict would recurse into raw engine data
        data["engine"] = dict(self.engine) or None
        if not self.rejected:
            del data["rejected"]
        del data["reported"]
        data.update({f"reported_{name}": value for name, value in self.reported.items()})
        if not self.disagreement:
            del data["disagreement"]
        if not self.partial:
            del data["partial"]
        return data  # made strict JSON with the whole result (runner)
