"""Ends a hidden test body that runs past its check's deadline: the check fails, on time.

The tests run in BenchRig's own thread, on values the candidate chose: a loop over
`range(add(1, 2))` when `add` returns 10**18, or any work the candidate's data makes slow,
would hold the attempt (and the run) past every deadline. One daemon thread per process
watches every running test body and, once its deadline has passed, raises `CheckOverrun`
in that thread (`PyThreadState_SetAsyncExc`: delivered between bytecodes), again every
REFIRE_S until the body ends, so `except BaseException: pass` cannot keep it running.

It never interrupts BenchRig's own work: while a body waits on the sandbox (`boundary`)
nothing is raised in it — that wait keeps its own deadline — and an overrun noticed
meanwhile is raised when the body next enters it. Work in one C call that never returns
to the interpreter (building a set of values crafted to share one hash) cannot be
interrupted; the codec refuses such values instead (`codec._refuse_hash_flooding`).
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

REFIRE_S = 0.1  # a body that caught the overrun gets it again this often


class CheckOverrun(BaseException):  # not an Exception: `except Exception` cannot keep going
    """The test body ran past its check's deadline."""


@dataclass(eq=False)
class Watch:
    """One test body being run: its thread and the seconds left to its deadline (which may
    move: a sandbox's start-up is given back to the check)."""

    thread_id: int
    left: Callable[[], float]
    in_boundary: int = 0  # > 0 while it waits on the sandbox
    fired: bool = False  # an overrun was raised in it (the check fails, whatever it caught)
    next_fire: float = 0.0


_cond = threading.Condition()
_watches: dict[int, Watch] = {}
_thread: list[threading.Thread] = []
_wakes_at: list[float] = [float("inf")]  # when the watchdog will look next


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Make `exc` pending in the thread (None: clear a pending one); the lock is held."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None)


def _run() -> None:
    with _cond:
        while True:
            now = time.monotonic()
            soonest = float("inf")
            for watch in _watches.values():
                left = watch.left()
                if left > 0:
                    soonest = min(soonest, now + left)
                    continue
                if not watch.in_boundary and now >= watch.next_fire:
                    watch.fired = True
                    watch.next_fire = now + REFIRE_S
                    _raise_in(watch.thread_id, CheckOverrun)
                soonest = min(soonest, now + REFIRE_S)
            _wakes_at[0] = soonest
            _cond.wait(None if soonest == float("inf") else max(0.0, soonest - now))


def _register(watch: Watch) -> None:
    with _cond:
        if not _thread:
            thread = threading.Thread(target=_run, name="benchrig-test-watchdog", daemon=True)
            thread.start()
            _thread.append(thread)
        _watches[id(watch)] = watch
        if time.monotonic() + watch.left() < _wakes_at[0]:  # else it wakes early enough
            _wakes_at[0] = 0.0
            _cond.notify()


def _end(watch: Watch) -> None:
    with _cond:
        _watches.pop(id(watch), None)
        if watch.fired:
            _raise_in(watch.thread_id, None)  # one still pending must not reach the caller


def run_watched(body: Callable[[], object], left: Callable[[], float]
                ) -> tuple[BaseException | None, Watch]:
    """Run `body()` with `left()` seconds to its deadline: what it raised (None if nothing)
    and its watch (`fired` when it ran past the deadline). An overrun arriving at any point
    here is caught: nothing of it escapes to the caller."""
    watch = Watch(threading.get_ident(), left)
    error: BaseException | None = None
    try:
        _current.watch = watch
        _register(watch)
        body()
    except BaseException as exc:  # the body's own failure, or the overrun
        error = exc
    finally:
        while True:  # an overrun may land anywhere until the watch is gone: retry
            try:
                _current.watch = None
                _end(watch)
                break
            except CheckOverrun:
                continue
    return error, watch


class _Current(threading.local):
    watch: Watch | None = None


_current = _Current()


@contextlib.contextmanager
def boundary() -> Iterator[None]:
    """BenchRig's own work for the watched body (a call into the sandbox, a restart): never
    interrupted; a body already past its deadline gets its overrun here, before it."""
    watch = _current.watch
    if watch is None:
        yield
        return
    with _cond:
        if watch.fired:
            _raise_in(watch.thread_id, None)  # raised here and now instead
            raise CheckOverrun
        watch.in_boundary += 1
    try:
        yield
    finally:
        with _cond:
            watch.in_boundary -= 1
