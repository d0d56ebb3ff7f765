"""The Typer app every command registers on, and the choices its options take."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import typer

if TYPE_CHECKING:
    from benchrig.core.task import TaskSpec

# Plain click help (not rich's boxes): option names are never cut, whatever the width.
app = typer.Typer(add_completion=False, no_args_is_help=True, help=(
    "BenchRig: run benchmark tasks on models and coding agents, check the answers in a "
    "sandbox, and summarize the results."),
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"max_content_width": 120})


def _version(shown: bool) -> None:
    if shown:
        from benchrig import __version__

        typer.echo(f"benchrig {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_version,
                                                   is_eager=True,
                                                   help="Print the version and exit.")
                                 ] = False) -> None:
    """BenchRig: run benchmark tasks on models and coding agents, check the answers in a
    sandbox, and summarize the results."""


# benchrig.report.FORMATS, spelled out so `--format` is a choice without importing the
# report for every command (tests/e2e/test_front_door.py checks that they agree).
Format = Literal["table", "markdown", "csv", "json"]
View = Literal["model", "task", "sample"]
CompareFormat = Literal["table", "json"]
ExecutorName = Literal["local", "ray"]


def _tasks(selectors: list[str]) -> list[TaskSpec]:
    """The tasks named (all by default), each check validated by its own check type."""
    from benchrig.packs import expand
    from benchrig.spec import load_tasks, task_paths

    return load_tasks(task_paths(expand(selectors)))


def _load(selectors: list[str], suites: list[str]) -> list[TaskSpec]:
    """The tasks of a selection, as the library selects them (benchrig.api.select)."""
    from benchrig.api import select

    return select(selectors, suites)
