"""The scorecard's frozen records: a suite's line of one model, its speed tasks, a range over
runs (report/scorecard.py computes them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchrig.report.context import ContextFigures
from benchrig.report.tooluse import ToolFigures
from benchrig.suites.base import SuiteReport

FigureValue = float | int | str | None
PLAIN = SuiteReport()  # the facet of a line no registered suite shows otherwise


@dataclass(frozen=True)
class Shown:
    """One figure a suite declares (suites.base.Figure), as computed: its name (the CSV's
    `<suite>_<name>`, the JSON's key), its words in the text, its value (label()led text)."""

    name: str
    text: str
    value: FigureValue


@dataclass(frozen=True)
class Span:
    """The range of a figure over the runs: (lowest run, highest run, number of runs)."""

    low: float
    high: float
    runs: int


@dataclass(frozen=True)
class SpeedFigures:
    """One speed task over its attempts: decode and prefill rates, TTFT, tokens, stops."""

    task: str
    decode_tps: float | None
    decode_floored: bool
    decode_span: Span | None
    prefill_tps: float | None
    avg_ttft_s: float | None
    output_tokens: float | None
    finish_reasons: dict[str, int]
    ttft_in_flight: int = 0  # TTFTs measured with others in flight (crowding)


@dataclass(frozen=True)
class SuiteCard:
    """One suite of one model: what passed, how it was measured, what went wrong."""

    suite: str
    runs: int
    passed: int
    scored: int
    errors: int  # errors not of the model's doing: shown beside the rate, not in it
    checks_passed: int
    checks_total: int
    truncated: int
    truncated_thinking: int
    avg_ttft_s: float | None
    rate_span: Span | None = None
    checks_span: Span | None = None
    thinking_tokens: int | None = None
    output_tokens: int | None = None
    decode_tps: float | None = None
    decode_floored: bool = False
    prefill_tps: float | None = None
    finish_reasons: dict[str, int] = field(default_factory=dict)
    max_checks: int = 0
    avg_output_tokens: float | None = None
    speed: tuple[SpeedFigures, ...] = ()
    deterministic: bool = False
    tools: ToolFigures | None = None  # tool_use: its own rates (out of the composite)
    context: ContextFigures | None = None
    ttft_in_flight: int = 0  # TTFTs in avg_ttft_s measured with others in flight
    pass_at: dict[int, float] | None = None  # an imported pack's line: k → pass@k
    problems: int = 0  # a pack's line: problems with a counted attempt
    facet: SuiteReport = PLAIN  # how its suite is shown
    figures: tuple[Shown, ...] = ()  # the figures its suite declares, computed

    @property
    def rate(self) -> float | None:
        """Task level: passed ÷ attempts that reached a verdict (a timeout counts as not
        passed; other errors are in `errors`, never in the rate)."""
        return self.passed / self.scored if self.scored else None

    @property
    def checks_rate(self) -> float | None:
        return self.checks_passed / self.checks_total if self.checks_total else None

    @property
    def score(self) -> float | None:
        """What the composite averages: coding at assertion level (`coding_pass_rate`),
        other answer-scored suites at task level; speed and tool use have none."""
        if not self.facet.composite or self.pass_at is not None:
            return None  # a pack's pass@k is its own figure, never averaged in
        return self.checks_rate if self.facet.by_checks else self.rate

    @property
    def score_span(self) -> Span | None:
        return self.checks_span if self.facet.by_checks else self.rate_span

    @property
    def thinking_share(self) -> float | None:
        if self.thinking_tokens is None or not self.output_tokens:
            return None
        return self.thinking_tokens / self.output_tokens
