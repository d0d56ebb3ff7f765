"""Results → the per-model table, the per-suite scorecards and their exports, in one of
`FORMATS`: `render` is the whole public surface; the modules behind it are private.

    grouping    results → one group per (model, agent), retried errors left out (once)
    table       a group → its row of the benchmark-runner's per-model table
    scorecard   a group → its suite cards and composite
    build       results → groups, rows and cards, computed once (a Report)
    phrases     the wording text and Markdown share
    render_*    one module per format: the table alone, and the full report
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchrig.attempts import Result
from benchrig.report import render_csv, render_markdown, render_text
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
}
FORMATS = tuple(RENDERERS)


def render(results: list[Result], format_: str, table_only: bool = False) -> str:
    """The results in `format_` (one of FORMATS): the per-model table, then the scorecards,
    or the table alone."""
    if format_ not in RENDERERS:
        raise ValueError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    renderer = RENDERERS[format_]
    if table_only:
        return renderer.table(model_rows(grouped(results)))
    return renderer.report(build(results))
