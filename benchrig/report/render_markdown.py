"""The Markdown report: the per-model table, then a scorecard section per model with its task
rows."""

from __future__ import annotations

from benchrig.core.errors import counts_against_model
from benchrig.metrics import any_floored, mean_metric
from benchrig.report.build import Report
from benchrig.report.crowding import IN_FLIGHT_NOTE, crowded_ttft
from benchrig.report.disagreed import DISAGREE_NOTE
from benchrig.report.grouping import Group
from benchrig.report.markdown import Md, header, row, text
from benchrig.report.phrases import (
    COMPOSITE_FORMULA,
    CONTEXT_NOTE,
    ERRORS_NOTE,
    MIXED_TTFT,
    STEP_HEADERS,
    TABLE_HEADERS,
    WARN,
    by_window,
    errors_text,
    interval_note,
    rate_text,
    step_cells,
    suite_detail,
    table_cells,
    tps,
    ttft,
)
from benchrig.report.scorecard import ModelCard
from benchrig.report.table import ModelRow
from benchrig.resultio.record import Record
from benchrig.textsafe import label


def render_table(rows: list[ModelRow]) -> str:
    lines = [*header(TABLE_HEADERS), *(row(table_cells(r)) for r in rows)]
    if any(r.errors for r in rows):
        lines += ["", ERRORS_NOTE[0].upper() + ERRORS_NOTE[1:] + "."]
    if any(r.by_window for r in rows):
        lines += ["", CONTEXT_NOTE[0].upper() + CONTEXT_NOTE[1:] + "."]
    if any(r.ttft_in_flight for r in rows):
        lines += ["", IN_FLIGHT_NOTE + "."]
    if any(r.disagreements for r in rows):
        lines += ["", DISAGREE_NOTE + "."]
    return "\n".join(lines) + "\n"


def _task_rows(group: Group, card: ModelCard) -> list[str]:
    """One row per task of the card's group, in the card's suite order, then by task."""
    tasks: dict[tuple[str, str], list[Record]] = {}
    for r in group.results:
        tasks.setdefault((card.line(r), label(r.task)), []).append(r)
    order = list(card.suites)
    rows = []
    for (suite, task), attempts in sorted(tasks.items(), key=lambda i: (order.index(i[0][0]),
                                                                         i[0][1])):
        scored = [r for r in attempts if counts_against_model(r)]
        passed = f"{sum(r.result == 'pass' for r in scored)}/{len(scored)}" if scored else "—"
        errors = len([r for r in attempts if r.result == "error"]) - len(
            [r for r in scored if r.result == "error"])
        if errors:
            passed = (f"{passed}, " if scored else "") + errors_text(errors)
        checks = sum(r.checks.total for r in scored)
        checks_text = f"{sum(r.checks.passed for r in scored)}/{checks}" if checks else "—"
        cut = sum(bool(r.truncated) for r in attempts)
        metrics = [r.metrics for r in attempts]
        mean_ttft = mean_metric(metrics, "ttft_ms")
        rate = mean_metric(metrics, "tokens_per_s")
        prefill = mean_metric(metrics, "prefill_tokens_per_s")
        rows.append(row([
            suite, task, str(len(attempts)), passed, checks_text,
            f"{WARN} {cut}" if cut else "0",
            ttft(None if mean_ttft is None else mean_ttft / 1000, crowded_ttft(attempts)),
            tps(rate, any_floored(metrics)), tps(prefill)]))
    return rows


def _step_tables(card: ModelCard) -> list[str]:
    """The context suite's per-window table, one per scenario."""
    lines: list[str] = []
    for context in (s.context for s in card.suites.values() if s.context is not None):
        for task in dict.fromkeys(s.task for s in context.steps):
            lines += ["", f"Context windows of {text(task)} (spill point: "
                      f"{text(context.spill)}):", "", *header(STEP_HEADERS)]
            lines += [row(step_cells(s)) for s in context.steps if s.task == task]
    return lines


def render_cards_markdown(cards: list[ModelCard], groups: list[Group]) -> str:
    lines = ["## Scorecards", "", f"Scores are {interval_note(cards)}. "
             f"The {COMPOSITE_FORMULA}. {WARN} marks responses cut off at the token limit "
             "before the answer was complete (`truncated_runs`); `~` marks a decode rate "
             "computed over the 0.001 s floor."]
    for card, group in zip(cards, groups, strict=True):
        lines += ["", f"### {text(card.model)} · {text(card.agent)}", "",
                  *header(["suite", "score", "runs", "detail", "avg TTFT", "truncated"])]
        composite = "—" if card.composite is None else rate_text(card.composite,
                                                                   card.composite_span)
        runs = max((s.runs for s in card.suites.values()), default=0)
        lines.append(row([
            Md("**composite**"), Md(f"**{text(composite)}**"), str(runs),
            f"mean of {', '.join(card.composite_suites) or '—'}",
            f"{ttft(card.avg_ttft_s, card.ttft_in_flight)}"
            f"{f' ({MIXED_TTFT})' if by_window(card) else ''}",
            f"{WARN} {card.truncated}" if card.truncated else "0"]))
        for suite in card.suites.values():
            score = rate_text(suite.score, suite.score_span) if suite.score is not None else "—"
            cut = f"{WARN} {suite.truncated}" if suite.truncated else "0"
            lines.append(row([suite.suite, score, str(suite.runs),
                              suite_detail(suite, with_rate=False),
                              ttft(suite.avg_ttft_s, suite.ttft_in_flight), cut]))
        lines += ["", *header(["suite", "task", "attempts", "passed", "checks", "truncated",
                               "avg TTFT", "decode", "prefill"])]
        lines += _task_rows(group, card)
        lines += _step_tables(card)
    return "\n".join(lines) + "\n"


def render_report(report: Report) -> str:
    """The Markdown report: the per-model table, then a scorecard section per model."""
    from benchrig.report.load_curves import markdown_curves  # a sweep's levels, apart

    curves = markdown_curves(report.levels)
    if not report.groups:
        return curves
    return ("## Per-model table\n\n" + render_table(report.rows) + "\n"
            + render_cards_markdown(report.cards, report.groups)
            + ("\n" + curves if curves else ""))
