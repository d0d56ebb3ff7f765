"""The built-in attempt shapes (public): one answer, a tool conversation, a window ladder.

Each takes an AttemptInput and returns its Outcome; a failing model is an outcome, never an
exception. What a shape needs beyond the contract is imported when it runs."""

from __future__ import annotations

import time
from dataclasses import replace

from benchrig.core.deadline import Deadline
from benchrig.core.errors import DriverError
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.toolcase import is_tool_case
from benchrig.core.transcript import DriverOutput
from benchrig.core.verdict import Verdict
from benchrig.resultio.files import utc_now
from benchrig.suites.base import AttemptInput, Outcome
from benchrig.textsafe import printable, type_name

__all__ = ["answered", "conversation", "single_answer", "sweep_only", "window_ladder"]


def single_answer(attempt: AttemptInput) -> Outcome:
    """One request, its answer judged by the task's check. A task that plans tool turns
    (`tools` and `turns`, which every suite allows) is a conversation instead."""
    return _answered(attempt, converse=is_tool_case(attempt.task.frontmatter))


def conversation(attempt: AttemptInput) -> Outcome:
    """A tool case's planned turns through the driver's `tool_turn`, each judged as it comes
    (benchrig.suites.turns), then the whole judged; a task without tools and turns is
    answered once."""
    return _answered(attempt, converse=is_tool_case(attempt.task.frontmatter))


def window_ladder(attempt: AttemptInput) -> Outcome:
    """Every window of a context scenario in order, each warmed up, filled, timed and judged
    (benchrig.suites.windows); recorded with the widest window. A window past the model's
    trained context is that step's failure (DriverRequest.strict_context)."""
    from benchrig.suites.windows import context_attempt  # only the context suite needs it

    request = replace(attempt.request, strict_context=True)
    settings, output, error, verdict = context_attempt(attempt.task, attempt.driver, request)
    return Outcome(settings, output, error, verdict, None, utc_now())


def sweep_only(attempt: AttemptInput) -> Outcome:
    """A suite whose task is a sweep of many measured levels (load), not one attempt: the
    command routes it to its own runner (`benchrig run --suite load`, benchrig.cli.load),
    so reaching here is BenchRig's mistake, recorded as a harness error, never a figure."""
    error = DriverError("harness", f"task {attempt.task.id!r} of suite "
                        f"{attempt.task.suite!r} is a sweep: run it with "
                        f"`benchrig run --suite {attempt.task.suite}`", phase="plan")
    return Outcome(attempt.request.settings, None, error, None, None, utc_now())


def answered(attempt: AttemptInput, output: DriverOutput | None,
             error: DriverError | None) -> Outcome:
    """The outcome of a shape that drove the model its own way: the model's part ends now,
    and `output` (unless the attempt ended in `error`) is judged by the task's check."""
    settings: Settings = attempt.request.settings
    ended = utc_now()
    verdict, check_s = None, None
    if output is not None and error is None:
        verdict, error, check_s = _judged(attempt.task, output, settings,
                                          attempt.request.deadline, attempt)
    return Outcome(settings, output, error, verdict, check_s, ended)


def _answered(attempt: AttemptInput, converse: bool) -> Outcome:
    output, error = _driven(attempt, converse)
    return answered(attempt, output, error)


def _driven(attempt: AttemptInput, converse: bool
            ) -> tuple[DriverOutput | None, DriverError | None]:
    """The driver's output, or the error it ended in (with the phase it was spending in)."""
    driver, request = attempt.driver, attempt.request
    deadline: Deadline = request.deadline
    try:
        if converse:  # imported here: most runs hold no tool case
            from benchrig.suites.turns import converse as talk

            return talk(driver, request, attempt.task), None
        output: DriverOutput = driver.run(request)
        return output, None
    except DriverError as exc:
        if exc.phase is None:  # the phase the driver was spending in when it failed
            exc.phase = deadline.phase
        return None, exc
    except Exception as exc:  # a driver bug on strange input: BenchRig is broken, lose nothing
        return None, DriverError("harness", f"the {driver.name} driver failed: "
                                 f"{type_name(exc)}: {printable(str(exc))}",
                                 phase=deadline.phase)


def _as_run(settings: Settings, output: DriverOutput) -> Settings:
    """The settings with the token budget the driver really used (it may cap it to the room
    the context leaves), so a truncation note names the real limit."""
    cap = output.effective.get("max_tokens")
    if isinstance(cap, int) and not isinstance(cap, bool) and cap != settings.max_tokens:
        return replace(settings, max_tokens=cap)
    return settings


def _judged(task: TaskSpec, output: DriverOutput, settings: Settings, deadline: Deadline,
            attempt: AttemptInput) -> tuple[Verdict | None, DriverError | None, float]:
    """The check's verdict on `output`, or the error checking ended in; and how long
    checking took. A check that cannot read the model's text has already failed (checks.
    guard); one that runs past the attempt's deadline is a timeout (the model's doing, as a
    driver's timeout is); anything else is BenchRig's fault (harness)."""
    from benchrig.checks.guard import CheckTimeout
    from benchrig.checks.judge import judge
    from benchrig.core.check import CheckContext

    if attempt.progress:
        attempt.progress.phase("checking")
    began = time.perf_counter()
    verdict, error = None, None
    try:
        deadline.spend("checking")
        verdict = judge(task, output.transcript, _as_run(settings, output),
                        CheckContext(deadline, attempt.sandboxes))
    except CheckTimeout as exc:
        error = DriverError("timeout", str(exc), phase="checking")
    except Exception as exc:  # BenchRig is broken: record it, lose nothing
        error = DriverError("harness", f"checking failed: {type_name(exc)}: "
                            f"{printable(str(exc))}", phase="checking")
    return verdict, error, round(time.perf_counter() - began, 6)
