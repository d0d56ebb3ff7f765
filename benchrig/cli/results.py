"""`benchrig summary`, `compare` and `report`: what the results say, filtered."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from benchrig import paths
from benchrig.core.errors import BenchRigError, UsageError
from benchrig.ui import error, warn

if TYPE_CHECKING:
    pass

from benchrig.cli.app import (
    Argument,
    CompareFormat,
    Exit,
    Format,
    Option,
    View,
    app,
    echo,
)

# The filters of summary, compare and report (benchrig/report/select.py).
Models = Annotated[list[str] | None, Option("--model", "-m",
    help="Only results of this model (repeatable).")]
Suites = Annotated[list[str] | None, Option("--suite", "-s",
    help="Only results of this suite (repeatable).")]
Labels = Annotated[list[str] | None, Option("--label",
    help="Only results run with this --label (repeatable).")]
Since = Annotated[str | None, Option("--since", metavar="DATE",
    help="Only results started at or after DATE: 2026-11-30 or 2026-11-30T17:00Z (UTC "
         "unless a zone is given).")]
Drivers = Annotated[list[str] | None, Option("--driver", "--agent", "-d",
    help="Only results of this driver or agent (repeatable).")]
ResultPaths = Annotated[list[Path] | None, Argument(metavar="[PATHS]...",
    help="Result files or folders (default: results/).")]


def _results(paths_: list[Path] | None, model: list[str] | None, suite: list[str] | None,
             label: list[str] | None, since: str | None, driver: list[str] | None,
             ) -> list[dict[str, Any]]:
    """The valid results of `paths_` that the filters keep (invalid files named on stderr;
    tasks whose file changed between results warned about); none: exit 1."""
    from benchrig.report.select import Filters, changed_tasks, parse_since, selected
    from benchrig.result import load_results

    filters = Filters(tuple(model or ()), tuple(suite or ()), tuple(label or ()),
                      tuple(driver or ()), parse_since(since) if since else None)
    loaded = load_results(paths_ or [paths.results_dir()])
    for path, reason in loaded.rejected:  # the rest is still summarized: a warning
        warn(f"{path}: skipped, not a valid result: {reason}")
    results = selected(loaded.results, filters)
    if not results:
        error("no results to summarize" if not loaded.results else
              f"none of the {len(loaded.results)} results matches the filters")
        raise Exit(1)
    changed = changed_tasks(results)
    if changed:
        names = ", ".join(f"{task} ({n} versions)" for task, n in list(changed.items())[:5])
        warn(f"{len(changed)} task{'s' if len(changed) != 1 else ''} changed between these "
             f"results (more than one task_hash): {names}{', …' if len(changed) > 5 else ''}; "
             "their versions are counted together below (--since keeps the newer ones)")
    return results


@app.command(short_help="Per-model table and per-suite scorecards of results.")
def summary(
    paths_: ResultPaths = None,
    format_: Annotated[Format, Option("--format", "-f",
        help="table (text), markdown (the report), csv (one row per model) or json (figures "
             "with n, intervals and methods).")] = "table",
    table_only: Annotated[bool, Option("--table-only",
        help="Only the per-model table, without the scorecards.")] = False,
    by: Annotated[View, Option("--by",
        help="model (the per-model table and scorecards) or task (a task × model table of "
             "pass counts).")] = "model",
    per_attempt: Annotated[bool, Option("--per-attempt",
        help="With --format csv: one row per attempt instead of per model.")] = False,
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
    driver: Drivers = None,
) -> None:
    """Per-model table, then per-suite scorecards, from results/*.json (EXAMPLE.json
    ignored; invalid files named). Rows are per model, agent and the settings that change
    an outcome (temperature, max tokens, think, context, label)."""
    from benchrig.report import FORMATS, VIEWS, render

    if format_ not in FORMATS:
        raise BenchRigError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    if by not in VIEWS:
        raise UsageError(f"--by {by!r}: choose one of {', '.join(VIEWS)}")
    if per_attempt and format_ != "csv":
        raise UsageError("--per-attempt is a CSV of the attempts: use it with --format csv")
    results = _results(paths_, model, suite, label, since, driver)
    echo(render(results, format_, table_only, by, per_attempt), nl=False)
    if format_ in ("table", "markdown") and by == "model" and not table_only:
        from benchrig.packs.scores import pack_report

        echo(pack_report(results), nl=False)


@app.command(short_help="Compare two models or configurations, paired by task.")
def compare(
    a: Annotated[str, Argument(metavar="A",
        help="Side A: a model, a --label, or model@agent.")],
    b: Annotated[str, Argument(metavar="B", help="Side B, named as A.")],
    paths_: ResultPaths = None,
    suite: Suites = None, since: Since = None,
    format_: Annotated[CompareFormat, Option("--format", "-f", help="table (text) or json.")
                       ] = "table",
) -> None:
    """Compare A with B, paired by task: pass-rate difference with its 95% interval over
    tasks (exact McNemar for single runs, else a seeded paired bootstrap), TTFT and decode
    ratios, pass@k for coding, and whether each difference is significant."""
    from benchrig.report import compare as comparing

    if format_ not in ("table", "json"):
        raise UsageError(f"--format {format_!r}: choose table or json")
    found = comparing.compare(_results(paths_, None, suite, None, since, None), a, b)
    render = comparing.render_json if format_ == "json" else comparing.render_text
    echo(render(found), nl=False)


@app.command(short_help="Write a self-contained HTML report of results.")
def report(
    paths_: ResultPaths = None,
    html: Annotated[Path, Option("--html", metavar="FILE",
        help="Where the report goes: one self-contained HTML file (no network needed).")
                    ] = Path("report.html"),
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
    driver: Drivers = None,
) -> None:
    """Write an HTML report: scorecards, pass rates per suite with intervals, TTFT and
    decode speed, a task × model heat map and every attempt's verdict, checks and answer."""
    from benchrig.report.build import build
    from benchrig.report.render_html import render_html
    from benchrig.result import write_atomic

    results = _results(paths_, model, suite, label, since, driver)
    given = [f"{name} {', '.join(v)}" for name, v in (("model", model), ("suite", suite),
             ("label", label), ("driver", driver)) if v] + ([f"since {since}"] if since else [])
    write_atomic(html, render_html(build(results), "; ".join(given)))
    echo(f"{html} ({len(results)} results)")
