"""The wording the text and Markdown renderings share: figures as words, notes, and
the cells of the per-model table."""

from __future__ import annotations

from benchrig.report.context import StepFigures, memory_text
from benchrig.report.crowding import in_flight_text
from benchrig.report.disagreed import disagree_text
from benchrig.report.panel import panel
from benchrig.report.scorecard import ModelCard, Span, SpeedFigures, SuiteCard
from benchrig.report.table import ModelRow

ERRORS_NOTE = ("pass rate = passed ÷ attempts that reached a verdict (a timeout counts as "
               "failed); errors of the infrastructure or of BenchRig are shown beside it, "
               "never counted in it")
CONTEXT_NOTE = ("a context attempt counts in the pass rate one verdict per window (found "
                "or not), as the context scorecard does")

WARN = "⚠"
COMPOSITE_FORMULA = ("composite = mean of the suite scores present: coding at assertion "
                     "level (coding_pass_rate), context by window (context_retrieval_pct), "
                     "reasoning and polish at task level; speed and tool use are not in it")
MIXED_TTFT = "all suites: it mixes context windows, compare TTFT per suite and window"


def by_window(card: ModelCard) -> bool:
    """The model ran a suite measured by window: its mean TTFT mixes window sizes."""
    return any(s.context is not None for s in card.suites.values())


def ttft(value: float | None, in_flight: int) -> str:
    """A mean TTFT in seconds, flagged with how many of its attempts shared the server."""
    flag = in_flight_text(in_flight)
    return f"{seconds(value)} ({flag})" if flag else seconds(value)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def span(value: Span | None) -> str:
    """` [25.0-58.3]` when there are two runs or more (one run has no spread to show)."""
    if value is None or value.runs < 2:
        return ""
    return f" [{value.low * 100:.1f}-{value.high * 100:.1f}]"


def rate_text(rate: float | None, value: Span | None) -> str:
    return pct(rate) + span(value)


def tps(value: float | None, floored: bool = False) -> str:
    """Tokens per second; `~` marks a rate computed over the 0.001 s floor."""
    return "—" if value is None else f"{'~' if floored else ''}{value:.1f} t/s"


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


DETERMINISTIC = "deterministic runs (temperature 0)"


def interval_note(cards: list[ModelCard]) -> str:
    runs = max((s.runs for c in cards for s in c.suites.values()), default=1)
    note = ("pass rates over the attempts that reached a verdict (a timeout counts as "
            "failed; other errors are shown beside, never counted)")
    if runs >= 2:
        note += (f"; [low-high] = range of the per-run rates, min-max over up to {runs} "
                 "runs")
    if any(s.deterministic for c in cards for s in c.suites.values()):
        note += (f"; {DETERMINISTIC}: every run was greedy decoding, so the runs repeat one "
                 "generation and a range shows no sampling variance")
    return note


def speed_line(f: SpeedFigures) -> str:
    """One speed task: decode rate [range over runs], prefill, TTFT, tokens, finish reasons."""
    decode = tps(f.decode_tps, f.decode_floored)
    if f.decode_span is not None and f.decode_span.runs >= 2:
        decode += f" [{f.decode_span.low:.1f}-{f.decode_span.high:.1f}]"
    tokens = "—" if f.output_tokens is None else f"{f.output_tokens:.0f}"
    finish = ", ".join(f"{k} {v}" for k, v in f.finish_reasons.items()) or "—"
    return (f"decode {decode} · prefill {tps(f.prefill_tps)} · "
            f"TTFT {ttft(f.avg_ttft_s, f.ttft_in_flight)} · "
            f"{tokens} tokens (finish: {finish})")


STEP_HEADERS = ["window", "prompt tokens", "TTFT", "prefill (engine / client)", "decode",
                "load", "memory", "placement", "found"]


def step_cells(step: StepFigures) -> list[str]:
    """One window's row of the per-step table."""
    tokens = "—" if step.prompt_tokens_actual is None else f"{step.prompt_tokens_actual:.0f}"
    if step.prompt_tokens_target is not None:
        tokens += f" of {step.prompt_tokens_target:.0f}"
    found = f"{step.passed}/{step.decided}"
    if step.errors:
        found += f" ({errors_text(step.errors)})"
    return [str(step.window), tokens, seconds(step.ttft_s),
            f"{tps(step.prefill_tps)} / {tps(step.prefill_client_tps)}", tps(step.decode_tps),
            seconds(step.load_time_s), memory_text(step), step.placement or "unknown", found]


def suite_detail(card: SuiteCard, with_rate: bool = True) -> str:
    """The suite's own figures: coding levels, speed rates, context retrieval, or passes
    and checks."""
    if card.pass_at is not None:  # an imported pack: its own metric, out of the composite
        text = (" · ".join(f"pass@{k} {pct(v)}" for k, v in card.pass_at.items())
                + f" over {card.problems} problems ({card.passed}/{card.scored} attempts "
                "passed; not in the composite)")
    elif (own := panel(card.suite).detail(card, with_rate)) is not None:
        text = own  # the suite's own line (panel.Panel): coding levels, speed, context, tools
    else:
        text = f"{card.passed}/{card.scored} passed"
        if with_rate:
            text = f"{rate_text(card.rate, card.rate_span)} ({card.passed}/{card.scored})"
        if card.max_checks > 1:
            text += f" · checks {card.checks_passed}/{card.checks_total}"
        if card.thinking_share is not None and card.thinking_tokens:
            text += f" · thinking {pct(card.thinking_share)} of output tokens"
    for figure in card.figures:  # the suite's declared figures (SuiteReport.figures)
        text += f" · {figure.text} {figure_text(figure.value)}"
    if card.errors and card.tools is None:  # the tool line counts its errors itself
        text += f" · {errors_text(card.errors)}"
    if card.deterministic:
        text += f" · {DETERMINISTIC}"
    return text


def figure_text(value: float | int | str | None) -> str:
    """A suite's declared figure as words: a number as written, a float to 4 significant
    digits, None as n/a (the text is label()led already)."""
    if value is None:
        return "n/a"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def errors_text(count: int) -> str:
    return f"{count} error{'s' if count != 1 else ''}"


def _num(value: float | None, fmt: str, floored: bool = False) -> str:
    if value is None:
        return "—"
    return ("~" if floored else "") + format(value, fmt)


TABLE_HEADERS = ["model", "agent", "attempts", "pass rate", "tokens/s", "TTFT ms", "wall s",
                 "cost $"]


def table_cells(row: ModelRow) -> list[str]:
    rate = "—" if row.pass_rate is None else f"{row.pass_rate:.0%} ({row.passed}/{row.scored})"
    if row.uncounted_errors:
        rate += f", {errors_text(row.uncounted_errors)}"
    return [
        row.model, _noted(row.agent, disagree_text(row.disagreements)), str(row.runs), rate,
        _noted(_num(row.tokens_per_s, ".1f", row.tokens_per_s_floored),
               row.tokens_per_s_caveat),
        _noted(_num(row.ttft_ms, ".0f"), in_flight_text(row.ttft_in_flight)),
        _num(row.wall_s, ".2f"),
        _noted(_num(row.cost_usd, ".5f"), row.cost_caveat),
    ]


def _noted(cell: str, caveat: str) -> str:
    """A mean with what it takes as partial or lacks as rejected: never silently."""
    return f"{cell} ({caveat})" if caveat else cell
