"""Transcript → verdict: the check the task names in `check.type`, found by name."""

from __future__ import annotations

from benchrig.checks import find_check
from benchrig.core.check import NO_CONTEXT, CheckContext
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import Verdict


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
