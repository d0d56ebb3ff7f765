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

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from benchrig.attempts import Result, without_retried_errors
from benchrig.report import by_task, render_csv, render_json, render_markdown, render_text
from benchrig.report.build import Report, build
from benchrig.report.grouping import grouped
from benchrig.report.table import ModelRow, model_rows


@dataclass(frozen=True)
class Renderer:
    """One format: the per-model table alone (`--table-only`), and the full report."""

    table: Callable[[list[ModelRow]], str]
    report: Callable[[Report], str]


RENDERERS: dict[str, Renderer] = {
    "table": Renderer(render_text.render_table, render_text.render_report),
    "markdown": Renderer(render_markdown.render_table, render_markdown.render_report),
    "csv": Renderer(render_csv.render_table, render_csv.render_report),
    "json": Renderer(render_json.render_table, render_json.render_report),
}
FORMATS = tuple(RENDERERS)


BY_TASK: dict[str, Callable[[by_task.TaskTable], str]] = {
    "table": by_task.render_text, "markdown": by_task.render_markdown,
    "csv": by_task.render_csv, "json": render_json.render_task_table,
}
VIEWS = ("model", "task")


def render(results: list[Result], format_: str, table_only: bool = False, by: str = "model",
           per_attempt: bool = False, packs: Mapping[str, str] | None = None) -> str:
    """The results in `format_` (one of FORMATS): the per-model table, then the scorecards,
    or the table alone; `by="task"` the task × model table; `per_attempt` (csv) one row per
    result; `packs`: imported packs' task ids → names, each its own scorecard line)."""
    if format_ not in RENDERERS:
        raise ValueError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    if per_attempt:
        if format_ != "csv":
            raise ValueError("--per-attempt is a CSV of the attempts: use it with --format csv")
        return render_csv.render_attempts(without_retried_errors(results))
    if by not in VIEWS:
        raise ValueError(f"unknown view {by!r}; choose one of {', '.join(VIEWS)}")
    if by == "task":
        return BY_TASK[format_](by_task.task_table(grouped(results)))
    renderer = RENDERERS[format_]
    if table_only:
        return renderer.table(model_rows(grouped(results)))
    if format_ == "table":  # LOAD HOOK (issue 26): the load suite's curves after the cards
        from benchrig.report.load import render_curves

        curves = render_curves(results)
        return renderer.report(build(results, packs)) + ("\n" + curves if curves else "")
    return renderer.report(build(results, packs))
