"""Transcript → verdict: the check the task names in `check.type`, found by name, run under the
attempt's deadline; a crash on the model's text is that check's failure (checks.guard)."""

from __future__ import annotations

from benchrig.checks import find_check
from benchrig.checks.guard import Unreadable, within_deadline
from benchrig.core.check import NO_CONTEXT, Check, CheckContext
from benchrig.core.errors import ERROR_KINDS, DriverError
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict
from benchrig.events import emit


def judge(task: TaskSpec, transcript: Transcript, settings: Settings,
          context: CheckContext = NO_CONTEXT) -> Verdict:
    """The verdict of the check the task names, lent the run's deadline and sandboxes.
    Raises CheckTimeout when the check runs past the deadline (the model's doing: the
    caller records a timeout); a check that could not read the model's text fails."""
    kind = task.check_type
    if kind is None:
        return Verdict("no-test", notes="the task has no check")
    check = find_check(kind)
    if check is None:
        raise ValueError(f"{task.path}: check.type: unknown check {kind!r}")
    found = check  # bound for the closure (mypy)

    def run() -> Verdict:
        try:
            return found(task, transcript, settings, context)
        except Unreadable as exc:
            return unreadable(found, task, exc.reason)

    return within_deadline(context.deadline, run)


def unreadable(check: Check, task: TaskSpec, reason: str) -> Verdict:
    """The failed verdict of a check that could not read the model's text: its `unjudged`
    details (the `tests` check: every assertion), else one failed detail named after it.
    Logged too: a reader crash may also be BenchRig's bug, so it must not go unseen."""
    emit("check.unreadable", task=task.id, check=check.name, reason=reason)
    details = check.unjudged(task, reason) or (CheckDetail(check.name, False, reason, 0.0),)
    return Verdict("fail", details, reason, evidence={"check": check.name,
                                                      "unreadable": reason})


def unjudged(task: TaskSpec, error: DriverError) -> tuple[CheckDetail, ...]:
    """The checks of a task whose attempt ended in `error` before it was judged: what the
    task's check says when the error counts against the model (`tests`: every assertion
    fails), else none."""
    if not ERROR_KINDS[error.kind] or task.check_type is None:
        return ()
    check = find_check(task.check_type)
    reason = f"not checked: the attempt ended in {error.kind} error"
    return check.unjudged(task, reason) if check is not None else ()
