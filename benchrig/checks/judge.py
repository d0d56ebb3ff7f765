"""Transcript → verdict: the check the task names in `check.type`, found by name."""

from __future__ import annotations

from benchrig.checks import find_check
from benchrig.core.check import NO_CONTEXT, CheckContext
from benchrig.core.errors import ERROR_KINDS, DriverError
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict


def judge(task: TaskSpec, transcript: Transcript, settings: Settings,
          context: CheckContext = NO_CONTEXT) -> Verdict:
    """The verdict of the check the task names, lent the run's deadline and sandboxes."""
    kind = task.check_type
    if kind is None:
        return Verdict("no-test", notes="the task has no check")
    check = find_check(kind)
    if check is None:
        raise ValueError(f"{task.path}: check.type: unknown check {kind!r}")
    return check(task, transcript, settings, context)


def unjudged(task: TaskSpec, error: DriverError) -> tuple[CheckDetail, ...]:
    """The checks of a task whose attempt ended in `error` before it was judged: what the
    task's check says when the error counts against the model (`tests`: every assertion
    fails), else none."""
    if not ERROR_KINDS[error.kind] or task.check_type is None:
        return ()
    check = find_check(task.check_type)
    reason = f"not checked: the attempt ended in {error.kind} error"
    return check.unjudged(task, reason) if check is not None else ()
