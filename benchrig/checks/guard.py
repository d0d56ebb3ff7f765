"""Judging guards: text the model controls is read through `model_text`, so a crash on it fails
the check (with the reason) instead of becoming a harness error; and every check runs under
the attempt's deadline (`within_deadline`).

How a check uses it (docs/security.md#a-crash-on-model-text-is-a-failed-check):

    with model_text("the answer"):
        value = parse(answer)         # RecursionError, ValueError, MemoryError … → Unreadable

`Unreadable` leaves the check; `checks.judge.judge` turns it into a failed verdict whose
details say why (the check's `unjudged` details, else one failed detail named after the
check). Faults the model cannot cause (a missing file, a broken sandbox) stay outside any
`model_text` block and remain `error/harness`.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from benchrig.core.deadline import GRACE_S, Deadline
from benchrig.textsafe import printable, type_name

T = TypeVar("T")
REASON_CAP = 500  # characters of an exception's text quoted in the reason


class Unreadable(Exception):  # a verdict, not an error: the model's doing
    """Text the model controls could not be read; the check fails with `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CheckTimeout(Exception):  # the model's doing, as a driver timeout is
    """A check did not finish by the attempt's deadline (plus the grace to notice it)."""


def unreadable_reason(what: str, exc: BaseException) -> str:
    """Why `what` could not be read: the exception's class and its (printable) text."""
    return f"{what} could not be read: {type_name(exc)}: {printable(str(exc), REASON_CAP)}"


@contextmanager
def model_text(what: str) -> Iterator[None]:
    """A block that reads text the model controls (`what` names it: "the answer", "the
    arguments of turn 2"): any Exception raised in it is the model's doing → Unreadable.
    Nested blocks keep the innermost reason."""
    try:
        yield
    except Unreadable:
        raise
    except Exception as exc:  # RecursionError, ValueError, MemoryError…: caused by the text
        raise Unreadable(unreadable_reason(what, exc)) from exc


def read(what: str, reader: Callable[[], T]) -> T:
    """`reader()` run as a `model_text(what)` block."""
    with model_text(what):
        return reader()


def within_deadline(deadline: Deadline | None, work: Callable[[], T]) -> T:
    """`work()`, or CheckTimeout when it has not returned by `deadline` (+ GRACE_S). It runs
    on a daemon thread the caller stops waiting for (Python cannot stop a thread: the caps
    before parsing keep any leftover work bounded). No deadline: run here, unbounded."""
    if deadline is None:
        return work()
    outcome: list[T] = []
    failure: list[BaseException] = []
    done = threading.Event()
    context = contextvars.copy_context()  # events and logging see the caller's context

    def run() -> None:
        try:
            outcome.append(context.run(work))
        except BaseException as exc:  # handed to the waiting caller, raised there
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name="benchrig-check", daemon=True).start()
    if not done.wait(deadline.left() + GRACE_S):
        raise CheckTimeout(f"checking did not finish within the attempt's timeout "
                           f"({deadline.budget_s:g} s)")
    if failure:
        raise failure[0]
    return outcome[0]
