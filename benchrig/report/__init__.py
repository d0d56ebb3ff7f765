"""Results → the per-model table, the per-suite scorecards and their exports, in one of
`FORMATS`: `render` is the whole public surface; the modules behind it are private.

    select      which results (`--model --suite --label --since --driver`); row settings
    grouping    results → one group per (model, agent, settings), retried errors left out
    by_task     groups → the task × model table of pass counts (`--by task`)
    stats       intervals over tasks, paired differences, ratios, pass@k (pure)
    compare     two sides (models or configurations) → their paired comparison
    table       a group → its row of the benchmark-runner's per-model table
    scorecard   a group → its suite cards and composite
    build       results → groups, rows and cards, computed once (a Report)
    phrases     the wording text and Markdown share
    render_*    one module per format: the table alone, and the full report
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchrig.attempts import without_retried_errors
from benchrig.report.build import Report, build
from benchrig.report.grouping import grouped
from benchrig.report.table import ModelRow, model_rows
from benchrig.resultio.record import as_records

if TYPE_CHECKING:
    from benchrig.report.by_task import TaskTable


@dataclass(frozen=True)
class Renderer:
    """One format: the per-model table alone (`--table-only`), and the full report."""

    table: Callable[[list[ModelRow]], str]
    report: Callable[[Report], str]


FORMATS = ("table", "markdown", "csv", "json")


def renderer(format_: str) -> Renderer:
    """The renderer of `format_` (one of FORMATS), its module imported now: a run prints
    only the table."""
    if format_ == "markdown":
        from benchrig.report import render_markdown

        return Renderer(render_markdown.render_table, render_markdown.render_report)
    if format_ == "csv":
        from benchrig.report import render_csv

        return Renderer(render_csv.render_table, render_csv.render_report)
    if format_ == "json":
        from benchrig.report import render_json

        return Renderer(render_json.render_table, render_json.render_report)
    from benchrig.report import render_text

    return Renderer(render_text.render_table, render_text.render_report)


def by_task_renderer(format_: str) -> Callable[[TaskTable], str]:
    """The task × model table's renderer in `format_` (one of FORMATS)."""
    if format_ == "json":
        from benchrig.report.render_json import render_task_table

        return render_task_table
    from benchrig.report import by_task

    found: Callable[[TaskTable], str] = {"table": by_task.render_text,
                                         "markdown": by_task.render_markdown,
                                         "csv": by_task.render_csv}[format_]
    return found


VIEWS = ("model", "task", "sample")


def render(results: Sequence[Mapping[str, Any]], format_: str, table_only: bool = False,
           by: str = "model", per_attempt: bool = False,
           packs: Mapping[str, str] | None = None) -> str:
    """The results in `format_` (one of FORMATS): the per-model table, then the scorecards,
    or the table alone; `by="task"` the task × model table (`"sample"`: a dataset task's
    samples each a row); `per_attempt` (csv) one row per
    result; `packs`: imported packs' task ids → names, each its own scorecard line)."""
    if format_ not in FORMATS:
        raise ValueError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    records = as_records(results)
    if per_attempt:
        if format_ != "csv":
            raise ValueError("--per-attempt is a CSV of the attempts: use it with --format csv")
        from benchrig.report.grouping import attempts_only
        from benchrig.report.render_csv import render_attempts

        return render_attempts(without_retried_errors(attempts_only(records)))
    if by not in VIEWS:
        raise ValueError(f"unknown view {by!r}; choose one of {', '.join(VIEWS)}")
    if by in ("task", "sample"):  # a sample: a row of its own (`task#id`)
        from benchrig.report.by_task import task_table

        return by_task_renderer(format_)(task_table(grouped(records), by == "sample"))
    chosen = renderer(format_)
    if table_only:
        return chosen.table(model_rows(grouped(records)))
    report = build(records, packs)
    if format_ == "table" and report.levels:  # the load suite's curves: its own section
        from benchrig.report.load_curves import render_curves

        curves = render_curves(report.levels)
        shown = chosen.report(report) if report.groups else ""
        return shown + ("\n" if shown else "") + curves
    return chosen.report(report)
