"""The `benchrig` command: run, validate, list, summary, compare, report, serve, import,
verify. Only this package prints or exits; `main` is the entry point."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

# each module registers its commands on `app`, in the order `--help` lists them
# isort: off
from benchrig.cli import run, tasks, results, view, serve, packs  # noqa: F401
# isort: on
from benchrig.cli.app import Format, _load, app
from benchrig.core.errors import BenchRigError, TaskError
from benchrig.textsafe import printable
from benchrig.ui import error

__all__ = ["Format", "_load", "main"]


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: typer parses the command line and ends the process (usage errors as
    click gives them, Ctrl-C 130); BenchRig's own errors become one clear message and
    exit 2."""
    try:
        app(args=argv)
    except TaskError as exc:
        for problem in exc.problems:
            typer.echo(printable(problem), err=True)
        sys.exit(2)
    except BenchRigError as exc:
        error(str(exc))
        sys.exit(2)
    sys.exit(0)  # not reached: typer's standalone mode exits
