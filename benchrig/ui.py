"""Progress on stderr: a live bar or status line on a terminal, plain phase lines elsewhere."""

from __future__ import annotations

import os
import sys
import time
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING

from benchrig.textsafe import printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID


@cache
def stderr() -> Console:
    """stderr as rich writes it, made on first use: a command that prints nothing there (a
    summary of valid files) never imports rich."""
    from rich.console import Console

    # soft_wrap: a long line (a path, a model file) stays one line in logs, not folded at 80;
    # emoji off: `:name:` in a message is text, as it is when written plainly (`_say`)
    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@cache
def styled() -> bool:
    """Whether stderr gets rich's styles and live bar: a terminal, or one forced by the
    variables rich reads. Elsewhere (a log, a pipe) rich would write each line as plain
    text, so `_say` writes it so itself, without importing rich (~35 ms of start-up)."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _say(prefix: str, style: str, text: str) -> None:
    """One line on stderr: `prefix` (coloured `style` on a terminal) and `text` printable."""
    if styled():
        head = f"[{style}]{prefix}[/{style}] " if prefix else ""
        stderr().print(f"{head}{escape(text)}")
        return
    sys.stderr.write(f"{prefix} {printable(text)}\n" if prefix else f"{printable(text)}\n")
    sys.stderr.flush()


# Texts are shown as given: `[…]` in a model name or a message is never read as rich markup
# (markup such as `[link=…]` would make rich itself write escape sequences).


def escape(text: str) -> str:
    """`text` as stderr may show it: made printable (it may carry a candidate's, an agent's or
    a task's words) and with rich's markup escaped."""
    from rich.markup import escape as rich_escape

    return rich_escape(printable(text))


def info(text: str) -> None:
    _say("", "", text)


def warn(text: str) -> None:
    _say("warning:", "yellow", text)


def error(text: str) -> None:
    _say("error:", "red", text)


class RunProgress:
    """One progress bar over every attempt of a run: done/total, passed/failed/errors so far,
    elapsed, time left, and what the latest attempt to report is doing.

    On a terminal it is a live rich bar on stderr; elsewhere each phase is a plain line.
    Verdict lines printed to stdout meanwhile appear above the bar when stdout is the same
    terminal, and go to stdout untouched when it is redirected.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.tally = {"pass": 0, "fail": 0, "error": 0}
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> RunProgress:
        if styled() and stderr().is_terminal:
            from rich.progress import (  # the bar's own modules: on a terminal only
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[tally]}"),
                                 TimeElapsedColumn(), TextColumn("ETA"),
                                 TimeRemainingColumn(), console=stderr(),
                                 redirect_stdout=sys.stdout.isatty(), redirect_stderr=False)
            self._bar.start()
            self._task = self._bar.add_task("starting", total=self.total,
                                            tally=self._tally())
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop drawing the bar (a message that follows stays below it)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _tally(self) -> str:
        return (f"[green]✓ {self.tally['pass']}[/green] [red]✗ {self.tally['fail']}[/red] "
                f"[yellow]! {self.tally['error']}[/yellow]")

    def attempt(self, label: str) -> AttemptLine:
        return AttemptLine(self, label)

    def show(self, text: str) -> None:
        if self._bar is not None and self._task is not None:
            # the counts, elapsed time and ETA keep their room: the description gives way
            room = max(16, stderr().width - 60)
            shown = text if len(text) <= room else text[:room - 1] + "…"
            self._bar.update(self._task, description=escape(shown))
        else:
            info(text)

    def advance(self, outcome: str | None = None) -> None:
        """One more attempt done; `outcome` (pass, fail, error) counted when given."""
        self.done += 1
        if outcome in self.tally:
            self.tally[outcome] += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.done, tally=self._tally())


class AttemptLine:
    """One attempt's phase and token count, drawn in the run's progress bar."""

    def __init__(self, run: RunProgress, label: str) -> None:
        self.run, self.label = run, label
        self._phase = "starting"
        self._last = 0.0

    def phase(self, text: str) -> None:
        self._phase = text
        self.run.show(f"{self.label}: {text}")

    def tokens(self, count: int) -> None:
        now = time.monotonic()
        if self.run._bar is not None and now - self._last > 0.1:
            self._last = now
            self.run.show(f"{self.label}: {self._phase} · {count} tokens")
