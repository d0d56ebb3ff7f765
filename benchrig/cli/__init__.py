"""The `benchrig` command: run, validate, list, summary, compare, report, serve, import,
verify. Only this package prints or exits; `main` is the entry point."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, get_args

# each module registers its commands on `app`, in the order `--help` lists them
# isort: off
from benchrig.cli import run, tasks, results, view, serve, packs  # noqa: F401
# isort: on
from benchrig.cli.app import Exit, Format, _load, app, echo
from benchrig.cli.results import summary
from benchrig.cli.run import run as run_command
from benchrig.core.errors import BenchRigError, TaskError
from benchrig.textsafe import printable
from benchrig.ui import error

__all__ = ["Format", "_load", "as_program", "guarded", "main", "run_parsed"]


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: BenchRig's own errors become one clear message and exit 2. Without
    `argv` it is the program itself and ends the process (`as_program`); given `argv`, it
    raises SystemExit like any command."""
    if argv is None:
        as_program(lambda: _command(None))
    _command(argv)


def _command(argv: list[str] | None) -> NoReturn:
    options = _plain_summary(sys.argv[1:] if argv is None else argv)
    if options is not None:
        guarded(lambda: _as_typer_invokes(lambda: summary(**options)))
    guarded(lambda: app(args=argv, standalone_mode=False))


def as_program(command: Callable[[], NoReturn]) -> NoReturn:
    """Run `command` as the process's last act. At its SystemExit everything registered to
    run at exit runs and stdout and stderr are flushed, then the process ends at once:
    the interpreter's own teardown (freeing ~460 modules one by one, a last collection)
    took 50–70 ms after the last line was written. A thread still at work (not a daemon),
    a flush that fails or an exit code that is not a number leave it to the usual exit."""
    import atexit
    import threading

    try:
        command()
    except SystemExit as done:
        code = 0 if done.code is None else done.code
        if not isinstance(code, int) or any(
                thread.is_alive() and not thread.daemon for thread in threading.enumerate()
                if thread is not threading.main_thread()):
            raise
        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise done from None
        os._exit(code)


def _plain_summary(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain `summary [PATHS]... [--format F] [--table-only]`, as typer
    would parse them, or None for any other command line (help, another option, an option
    given twice, a path that looks like an option), which typer parses: its parsing imports
    pydantic and builds an adapter per option, a tenth of a second of a summary."""
    if not argv or argv[0] != "summary" or any(k.endswith("_COMPLETE") for k in os.environ):
        return None
    paths_: list[Path] = []
    options: dict[str, Any] = {}
    tokens = iter(argv[1:])
    for token in tokens:
        if token in ("--format", "-f") and "format_" not in options:
            value = next(tokens, None)
            if value is None or value not in get_args(Format):  # typer's usage error
                return None
            options["format_"] = value
        elif token == "--table-only" and "table_only" not in options:
            options["table_only"] = True
        elif token.startswith("-"):
            return None
        else:
            paths_.append(Path(token))
    return {"paths_": paths_ or None, **options}


def run_parsed(**options: Any) -> NoReturn:
    """`benchrig run` with its options already parsed (scripts/runner.py): the same command,
    the same output and exit codes, without typer's parsing, which builds a pydantic adapter
    per option (a tenth of a second of start-up). It is the program: it ends the process."""
    as_program(lambda: guarded(lambda: _as_typer_invokes(lambda: run_command(**options))))


def _as_typer_invokes(command: Callable[[], object]) -> object:
    """What typer does around a command it invokes (standalone_mode=False): Ctrl-C is exit
    130, end of input an abort, a closed stdout exit 1, Exit its exit code."""
    try:
        return command()
    except EOFError:
        echo(err=True)
        error("aborted")
        return 130
    except KeyboardInterrupt:
        return 130
    except Exit as exc:
        return exc.exit_code
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        sys.exit(1)


def guarded(command: Callable[[], object]) -> NoReturn:
    """Run a command and exit as the CLI does: BenchRig's own errors become one clear
    message and exit 2."""
    try:
        code = command()
    except TaskError as exc:
        for problem in exc.problems:
            echo(printable(problem), err=True)
        sys.exit(2)
    except BenchRigError as exc:
        error(str(exc))
        sys.exit(2)
    except Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors carry their own exit code
        parser = sys.modules.get("typer")  # loaded if typer parsed the command line
        if parser is not None and isinstance(exc, parser.Abort):
            error("aborted")
            sys.exit(130)
        code = getattr(exc, "exit_code", None)
        if code is None:
            raise
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        sys.exit(code)
    sys.exit(code if isinstance(code, int) else 0)


