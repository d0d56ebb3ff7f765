"""Check: one check type as tasks name it in `check.type` — how it judges an answer and what it
requires of a task's frontmatter. The `@check` decorator makes one; benchrig.checks finds it by
name (built-in, or the `benchrig.checks` entry-point group of an installed package)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from benchrig.core.deadline import Deadline
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict


@dataclass(frozen=True)
class CheckContext:
    """What the run lends a check besides the task and the answer: the attempt's deadline
    (checking spends from it: no check runs past it) and the run's sandbox pool for
    candidate code (a benchrig.sandbox.SandboxPool; typed loosely because core sits below
    the sandbox). Both None: no deadline, and a pool of the check's own."""

    deadline: Deadline | None = None
    sandboxes: Any = None


NO_CONTEXT = CheckContext()
Judge = Callable[[TaskSpec, Transcript, Settings, CheckContext], Verdict]
# A task's whole frontmatter (schema-valid) → `field: what is wrong` for its check.
Validator = Callable[[Mapping[str, Any]], list[str]]
# (task, why it was not judged) → the checks recorded when the attempt ended, before
# judging, in an error that counts against the model (a timeout).
Unjudged = Callable[[TaskSpec, str], tuple[CheckDetail, ...]]


def no_problems(meta: Mapping[str, Any]) -> list[str]:
    """The validator of a check that needs nothing the schema does not already require."""
    return []


def nothing_to_preload() -> None:
    """The preload of a check that reads nothing from disk while it judges."""


def nothing_checked(task: TaskSpec, reason: str) -> tuple[CheckDetail, ...]:
    """The checks of an unjudged task by default: none (it stays outside any check rate)."""
    return ()


@dataclass(frozen=True)
class Check:
    """A check type: `judge` turns a transcript into a verdict; `validate` refuses, at load,
    a task whose check cannot work; `preload` reads now whatever judging would read from disk
    (run before any driver, so an agent cannot change it); `unjudged` gives the checks of a
    task whose attempt ended in the model's own error before it could be judged; `by_window`:
    it judges one window of a ladder, so the task loader refuses it in a suite whose attempt
    does not ask window by window (the loader asks the suite: a check never looks one up)."""

    name: str
    judge: Judge
    validate: Validator = no_problems
    preload: Callable[[], None] = nothing_to_preload
    unjudged: Unjudged = nothing_checked
    by_window: bool = False

    def __call__(self, task: TaskSpec, transcript: Transcript, settings: Settings,
                 context: CheckContext = NO_CONTEXT) -> Verdict:
        return self.judge(task, transcript, settings, context)


def check(name: str, *, validate: Validator = no_problems,
          preload: Callable[[], None] = nothing_to_preload,
          unjudged: Unjudged = nothing_checked,
          by_window: bool = False) -> Callable[[Judge], Check]:
    """Make a judging function the check type `name`, with its frontmatter validator."""

    def make(judge: Judge) -> Check:
        return Check(name, judge, validate, preload, unjudged, by_window)

    return make
