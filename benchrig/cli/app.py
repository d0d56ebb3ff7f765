"""The command registry (typer imported only when it parses a command line), `echo`,
`Exit`, and the choices the options take."""

from __future__ import annotations

import re
import sys
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

if TYPE_CHECKING:
    from benchrig.core.task import TaskSpec



class Param:
    """typer.Option's or typer.Argument's arguments, kept until typer parses a command line:
    `run_parsed` and a plain summary never import typer (~40 ms with its pydantic adapters)."""

    def __init__(self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.kind, self.args, self.kwargs = kind, args, kwargs


def Option(*args: Any, **kwargs: Any) -> Any:  # spelled as typer's
    return Param("Option", args, kwargs)


def Argument(*args: Any, **kwargs: Any) -> Any:  # spelled as typer's
    return Param("Argument", args, kwargs)


class Commands:
    """The commands, handed to a typer app only when a command line is parsed by typer."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self.registered: list[tuple[str | None, dict[str, Any], Callable[..., Any]]] = []
        self.callbacks: list[Callable[..., Any]] = []
        self.groups: list[tuple[str, Commands]] = []

    def group(self, name: str, **settings: Any) -> Commands:
        """A command group (`benchrig NAME COMMAND`), its commands registered on what it
        returns."""
        commands = Commands(**settings)
        self.groups.append((name, commands))
        return commands

    def command(self, name: str | None = None, **options: Any
                ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.registered.append((name, options, function))
            return function
        return register

    def callback(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.callbacks.append(function)
            return function
        return register

    def __call__(self, **kwargs: Any) -> Any:
        return self.typer_app()(**kwargs)

    def typer_app(self) -> Any:
        import typer

        app = typer.Typer(**self.settings)
        for function in self.callbacks:
            app.callback()(_with_typer(function, typer))
        for name, options, function in self.registered:
            app.command(name, **options)(_with_typer(function, typer))
        for name, commands in self.groups:
            app.add_typer(commands.typer_app(), name=name)
        return app


def _with_typer(function: Callable[..., Any], typer: Any) -> Callable[..., Any]:
    """`function` with each `Param` in its annotations made the typer object it stands for."""
    hints = typing.get_type_hints(function, include_extras=True)
    for name, hint in hints.items():
        if get_origin(hint) is Annotated:
            base, *extras = get_args(hint)
            made = [getattr(typer, e.kind)(*e.args, **e.kwargs) if isinstance(e, Param) else e
                    for e in extras]
            hints[name] = Annotated[(base, *made)]
    function.__annotations__ = hints
    return function


# Plain click help (not rich's boxes): option names are never cut, whatever the width.
app = Commands(add_completion=False, no_args_is_help=True, help=(
    "BenchRig: run benchmark tasks on models and coding agents, check the answers in a "
    "sandbox, and summarize the results."),
               pretty_exceptions_enable=False, rich_markup_mode=None,
               context_settings={"max_content_width": 120})


class Exit(Exception):
    """End the command with `exit_code` (as typer.Exit does, without importing typer)."""

    def __init__(self, exit_code: int = 0) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def echo(text: str = "", nl: bool = True, err: bool = False) -> None:
    """Write `text` as typer.echo does: a newline, flushed, ANSI styles dropped off a
    terminal."""
    stream = sys.stderr if err else sys.stdout
    if "\033" in text and not stream.isatty():
        text = _ANSI.sub("", text)
    stream.write(f"{text}\n" if nl else text)
    stream.flush()


def _version(shown: bool) -> None:
    if shown:
        from benchrig import __version__

        echo(f"benchrig {__version__}")
        raise Exit()


@app.callback()
def _options(version: Annotated[bool, Option("--version", callback=_version,
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


def _load(selectors: list[str], suites: list[str]) -> list:  # type: ignore[type-arg]
    from benchrig.packs.select import load_selection
    from benchrig.suites import SUITES, get_suite, known_suites

    # the installed packages are read only when a name is not a built-in suite's
    tasks = load_selection(selectors, suites, SUITES if set(suites) <= set(SUITES)
                           else known_suites())
    if not suites and not selectors:  # an opt-in suite (tool_use) runs only when named
        tasks = [t for t in tasks if not get_suite(t.suite).opt_in]
    return tasks
