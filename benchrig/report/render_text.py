"""The plain-text rendering: the per-model table, then the scorecards."""

from __future__ import annotations

from benchrig.report.build import Report
from benchrig.report.crowding import IN_FLIGHT_NOTE
from benchrig.report.disagreed import DISAGREE_NOTE
from benchrig.report.phrases import (
    COMPOSITE_FORMULA,
    CONTEXT_NOTE,
    ERRORS_NOTE,
    MIXED_TTFT,
    STEP_HEADERS,
    TABLE_HEADERS,
    WARN,
    by_window,
    interval_note,
    pct,
    span,
    speed_line,
    step_cells,
    suite_detail,
    table_cells,
    ttft,
)
from benchrig.report.scorecard import ModelCard, SuiteCard
from benchrig.report.table import ModelRow


def render_table(rows: list[ModelRow]) -> str:
    table = [TABLE_HEADERS, *(table_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(TABLE_HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
             for line in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(r.errors for r in rows):
        lines.append(ERRORS_NOTE[0].upper() + ERRORS_NOTE[1:] + ".")
    if any(r.by_window for r in rows):
        lines.append(CONTEXT_NOTE[0].upper() + CONTEXT_NOTE[1:] + ".")
    if any(r.ttft_in_flight for r in rows):
        lines.append(IN_FLIGHT_NOTE + ".")
    if any(r.disagreements for r in rows):
        lines.append(DISAGREE_NOTE + ".")
    return "\n".join(lines) + "\n"


def _flags(card: SuiteCard) -> str:
    flags = []
    if card.truncated:
        flags.append(f"{WARN} {card.truncated} truncated")
    if card.truncated_thinking:
        flags.append(f"{card.truncated_thinking} cut off while thinking")
    return " · ".join(flags)


def _composite(card: ModelCard) -> str:
    if card.composite is None:
        return "composite —"
    return (f"composite {pct(card.composite)}{span(card.composite_span)} "
            f"(mean of {', '.join(card.composite_suites)})")


def _step_table(suite: SuiteCard) -> list[str]:
    """The context suite's per-window table, one block per scenario."""
    assert suite.context is not None
    lines: list[str] = []
    for task in dict.fromkeys(s.task for s in suite.context.steps):
        rows = [STEP_HEADERS, *(step_cells(s) for s in suite.context.steps if s.task == task)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(STEP_HEADERS))]
        lines.append(f"    {task}")
        lines += ["      " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
                  .rstrip() for row in rows]
    return lines


def render_cards_text(cards: list[ModelCard]) -> str:
    lines = [f"Scorecards — {interval_note(cards)}"]
    for card in cards:
        mixed = f" ({MIXED_TTFT})" if by_window(card) else ""
        head = [f"{card.model} · {card.agent}", _composite(card),
                f"avg TTFT {ttft(card.avg_ttft_s, card.ttft_in_flight)}{mixed}"]
        if card.truncated:
            head.append(f"{WARN} {card.truncated} truncated")
        lines += ["", "  ".join([head[0], " · ".join(head[1:])])]
        width = max(len(s) for s in card.suites)
        for suite in card.suites.values():
            parts = [suite_detail(suite),
                     f"avg TTFT {ttft(suite.avg_ttft_s, suite.ttft_in_flight)}"]
            if _flags(suite):
                parts.append(_flags(suite))
            lines.append(f"  {suite.suite.ljust(width)}  {' · '.join(parts)}")
            task_width = max((len(f.task) for f in suite.speed), default=0)
            lines += [f"    {f.task.ljust(task_width)}  {speed_line(f)}" for f in suite.speed]
            if suite.context is not None:
                lines += _step_table(suite)
    lines += ["", COMPOSITE_FORMULA[0].upper() + COMPOSITE_FORMULA[1:] + "."]
    return "\n".join(lines) + "\n"


def render_report(report: Report) -> str:
    """The per-model table, then the scorecards."""
    return render_table(report.rows) + "\n" + render_cards_text(report.cards)
