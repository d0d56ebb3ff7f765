"""`benchrig summary`, `compare` and `report`: what the results say, filtered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer import Argument, Exit, Option, echo

from benchrig import paths
from benchrig.cli.app import CompareFormat, Format, View, app
from benchrig.core.errors import BenchRigError, UsageError
from benchrig.textsafe import printable
from benchrig.ui import error, info, warn

if TYPE_CHECKING:
    from benchrig.report.viewer import Spool
    from benchrig.resultio.record import Record

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
             also: Callable[[Record, dict[str, Any]], None] | None = None,
             whole: bool | Callable[[str], bool] = True) -> list[Record]:
    """The valid results of `paths_` that the filters keep, as the views read them (invalid
    files named on stderr; tasks whose file changed between results warned about); none:
    exit 1. `also`: each valid result the filters keep, its record and its whole JSON, as it
    is read (result.load_records); `whole` False: lean records (a command that shows no
    whole attempt: record.WHOLE_ONLY); a function of the suite's name: whole where it says."""
    from benchrig.report.select import Filters, changed_tasks, parse_since, selected
    from benchrig.resultio.files import freeze_loaded, load_records

    filters = Filters(tuple(model or ()), tuple(suite or ()), tuple(label or ()),
                      tuple(driver or ()), parse_since(since) if since else None)
    def kept(record: Record, data: dict[str, Any]) -> None:
        if also is not None and filters.keeps(record):
            also(record, data)

    loaded = load_records(_existing(paths_ or [paths.results_dir()]),
                          None if also is None else kept, whole)
    freeze_loaded(bool(loaded.rejected))  # the records live until the command ends
    for path, reason in loaded.rejected:  # the rest is still summarized: a warning
        warn(f"{path}: skipped, not a valid result: {reason}")
    results = selected(loaded.records, filters)
    if not results:
        error("no results to summarize" if not loaded.records else
              f"none of the {len(loaded.records)} results matches the filters")
        raise Exit(1)
    changed = changed_tasks(results)
    if changed:
        names = ", ".join(f"{task} ({n} versions)" for task, n in list(changed.items())[:5])
        warn(f"{len(changed)} task{'s' if len(changed) != 1 else ''} changed between these "
             f"results (more than one task_hash): {names}{', …' if len(changed) > 5 else ''}; "
             "their versions are counted together below (--since keeps the newer ones)")
    return results


def _existing(given: list[Path]) -> list[Path]:
    """`given`, or UsageError naming the first that does not exist (a mistyped path is not
    an invalid result)."""
    for path in given:
        if not path.exists():
            raise UsageError(f"{printable(str(path))}: no such file or folder")
    return given


@app.command(short_help="Per-model table and per-suite scorecards of results.")
def summary(
    paths_: ResultPaths = None,
    format_: Annotated[Format, Option("--format", "-f",
        help="table (text), markdown (the report), csv (one row per model) or json (figures "
             "with n, intervals and methods).")] = "table",
    table_only: Annotated[bool, Option("--table-only",
        help="Only the per-model table, without the scorecards.")] = False,
    by: Annotated[View, Option("--by",
        help="model (the per-model table and scorecards), task (a task × model table of "
             "pass counts) or sample (the same, each sample of a dataset task a row)."
        )] = "model",
    per_attempt: Annotated[bool, Option("--per-attempt",
        help="With --format csv: one row per attempt instead of per model.")] = False,
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
    driver: Drivers = None,
) -> None:
    """Per-model table, then per-suite scorecards, from results/*.json (EXAMPLE.json
    ignored; invalid files named). Rows are per model, agent and the settings that change
    an outcome (temperature, max tokens, think, context, label)."""
    from benchrig.packs.scores import pack_tasks
    from benchrig.report import FORMATS, VIEWS, render

    if format_ not in FORMATS:
        raise BenchRigError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    if by not in VIEWS:
        raise UsageError(f"--by {by!r}: choose one of {', '.join(VIEWS)}")
    if per_attempt and format_ != "csv":
        raise UsageError("--per-attempt is a CSV of the attempts: use it with --format csv")
    from benchrig.report.facets import reads_whole_records

    results = _results(paths_, model, suite, label, since, driver, whole=reads_whole_records)
    echo(render(results, format_, table_only, by, per_attempt, pack_tasks()), nl=False)
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
    from benchrig.report.facets import reads_whole_records
    from benchrig.report.grouping import attempts_only, levels_only

    results = _results(paths_, None, suite, None, since, None, whole=reads_whole_records)
    # a sweep's levels are not attempts: never paired for a pass rate, compared apart
    attempts, levels = attempts_only(results), levels_only(results)
    sides = [[r for r in levels if comparing.matches(side, r)] for side in (a, b)]
    if format_ == "json" and levels:  # the load levels side by side: their own key
        import json

        from benchrig.report.load_curves import json_compare

        paired = comparing.as_json(comparing.compare(attempts, a, b)) \
            if attempts else {"a": a, "b": b}
        echo(json.dumps({**paired, "load": json_compare(sides[0], sides[1])}, indent=2,
                        allow_nan=False) + "\n", nl=False)
    elif format_ == "json" or not levels or attempts:
        found = comparing.compare(attempts, a, b)
        render = comparing.render_json if format_ == "json" else comparing.render_text
        echo(render(found), nl=False)
    if format_ == "table" and levels:  # the load levels side by side
        from benchrig.report.load_curves import render_compare

        shown = render_compare(sides[0], sides[1], (a, b))
        echo(("\n" if attempts else "") + shown if shown else "", nl=False)


def pack_lines(results: list[Record]) -> tuple[str, ...]:
    """Each imported pack's score line for the HTML page (its own panel: pass@k over its
    problems, not folded into a suite's rate)."""
    from benchrig.packs.scores import pack_scores

    return tuple(score.line() for score in pack_scores(results))


@app.command(short_help="Write a self-contained HTML report of results.")
def report(
    paths_: ResultPaths = None,
    html: Annotated[Path, Option("--html", metavar="FILE",
        help="Where the report goes: one self-contained HTML file (no network needed).")
                    ] = Path("report.html"),
    force: Annotated[bool, Option("--force",
        help="Overwrite FILE even when it is not a BenchRig report.")] = False,
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
    driver: Drivers = None,
) -> None:
    """Write an HTML report: scorecards, pass rates per suite with intervals, TTFT and
    decode speed, a task × model heat map and every attempt's verdict, checks and answer."""
    import contextlib
    import tempfile

    from benchrig.report.viewer import Spool

    _may_overwrite(html, force)
    given = [f"{name} {', '.join(v)}" for name, v in (("model", model), ("suite", suite),
             ("label", label), ("driver", driver)) if v] + ([f"since {since}"] if since else [])
    with contextlib.ExitStack() as stack:
        try:  # each drill-down made from the one read of its file
            spool = Spool(stack.enter_context(tempfile.TemporaryFile(
                prefix="benchrig-drilldowns-")))
        except OSError:  # no temporary file: each drill-down reads its file again
            spool = None
        results = _results(paths_, model, suite, label, since, driver,
                           spool.add if spool else None)
        _write_report(html, results, paths_, spool, "; ".join(given))
    echo(f"{html} ({len(results)} results)")


def _write_report(html: Path, results: list[Record], paths_: list[Path] | None,
                  spool: Spool | None, filters: str) -> None:
    """The page written as it is made: never all of it in memory."""
    from benchrig.packs.scores import pack_tasks
    from benchrig.report.build import build
    from benchrig.report.render_html import render_html_parts
    from benchrig.report.view_server import sidecars
    from benchrig.report.viewer import read_sidecar_file
    from benchrig.resultio.files import write_atomic

    folders = [p if p.is_dir() else p.parent for p in (paths_ or [paths.results_dir()])]
    # keyed by what the result says, not by object: the report works on checked copies
    files = {(r.transcript_file, r.run_id): path
             for r, path in zip(results, sidecars(results, folders), strict=True) if path}

    def sidecar_of(result: Record) -> dict[str, Any] | None:
        found = files.get((result.transcript_file, result.run_id))
        return None if found is None else read_sidecar_file(found)

    write_atomic(html, render_html_parts(build(results, pack_tasks()), filters,
                                         packs=pack_lines(results), sidecar_of=sidecar_of,
                                         spool=spool))


results_group = typer.Typer(no_args_is_help=True,
                            help="Manage the result files of a results folder.")
app.add_typer(results_group, name="results")


@results_group.command(short_help="Delete chosen results and their transcripts (dry run "
                                  "by default).")
def prune(
    folder: Annotated[Path | None, Argument(metavar="[FOLDER]",
        help="The results folder. [default: $BENCHRIG_RESULTS_DIR, else results/]")] = None,
    errors: Annotated[bool, Option("--errors",
        help="Only results whose outcome is error.")] = False,
    label: Annotated[list[str] | None, Option("--label",
        help="Only results run with this --label (repeatable).")] = None,
    before: Annotated[str | None, Option("--before", metavar="DATE",
        help="Only results started before DATE: 2026-11-30 or 2026-11-30T17:00Z (UTC unless "
             "a zone is given).")] = None,
    yes: Annotated[bool, Option("--yes",
        help="Delete them; without it, only list what would be deleted.")] = False,
) -> None:
    """Delete the results that match every filter given (at least one), each with its
    .transcript.jsonl sidecar. Without --yes nothing is deleted: the files are listed."""
    import datetime as dt

    from benchrig.resultio.files import load_results

    if not (errors or label or before):
        raise UsageError("prune needs a filter: --errors, --label or --before")
    cutoff = None
    if before:
        try:
            cutoff = dt.datetime.fromisoformat(before)
        except ValueError:
            raise UsageError(f"--before {before!r} is not a date (2026-11-30) or a date and "
                             "time (2026-11-30T17:00Z)") from None
        cutoff = cutoff if cutoff.tzinfo else cutoff.replace(tzinfo=dt.UTC)
    where = folder or paths.results_dir()
    if not where.is_dir():
        raise UsageError(f"{printable(str(where))}: no such folder")
    chosen: list[Path] = []
    for file in sorted(where.glob("*.json")):
        loaded = load_results([file]).results  # invalid files are not results: never pruned
        if loaded and _prunable(loaded[0], errors, tuple(label or ()), cutoff):
            chosen.append(file)
    sidecars = [s for s in (f.with_suffix(".transcript.jsonl") for f in chosen) if s.exists()]
    for file in chosen:
        echo(printable(str(file)))
    what = (f"{len(chosen)} result{'s' if len(chosen) != 1 else ''} and {len(sidecars)} "
            f"transcript{'s' if len(sidecars) != 1 else ''}")
    if not yes:
        info(f"would delete {what}; run again with --yes to delete them")
        return
    for file in [*chosen, *sidecars]:
        file.unlink(missing_ok=True)
    info(f"deleted {what} from {printable(str(where))}")


def _prunable(result: dict[str, Any], errors: bool, labels: tuple[str, ...],
              cutoff: Any) -> bool:
    """Whether `result` matches every filter given."""
    import datetime as dt

    if errors and result["result"] != "error":
        return False
    if labels and result.get("label") not in labels:
        return False
    if cutoff is not None:
        try:
            started = dt.datetime.fromisoformat(result["started_at"])
        except (TypeError, ValueError):
            return False  # no date to compare: kept
        started = started if started.tzinfo else started.replace(tzinfo=dt.UTC)
        if started >= cutoff:
            return False
    return True


def _may_overwrite(html: Path, force: bool) -> None:
    """UsageError unless `html` is free to write: missing, a BenchRig report, or --force."""
    from benchrig.report.marker import is_report
    from benchrig.textsafe import printable

    if html.is_dir():
        raise UsageError(f"--html {printable(str(html))}: is a folder; name a file")
    if force or not html.exists() or is_report(html):
        return
    raise UsageError(f"--html {printable(str(html))}: exists and is not a BenchRig report (no "
                     "report marker in its head); refusing to overwrite it: choose another "
                     "file, or --force")
