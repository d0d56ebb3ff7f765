"""One attempt's deadline: a monotonic start and a budget that every phase spends from, and
the attempt's cooperative stop that ends it early (Ctrl-C)."""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

# How far past its timeout_s an attempt may end (docs/results.md#deadline): the time to
# notice the deadline and stop (one llama.cpp chunk of prefill, one HTTP read, a socket
# shut down), not a second budget.
GRACE_S = 0.5


@dataclass(eq=False)  # one attempt's own: compared and hashed by identity (Stop keeps a set)
class Deadline:
    """`budget_s` seconds from `started` (time.monotonic). `phase` names what is spending
    now (`spend`), so a timeout can say which phase ran out. Only the phase changes, and the
    end, once, when the attempt is stopped (`Stop`): a deadline made while a `Stop` is in
    force (`stop_scope`) ends when it is set, so whatever polls it stops too."""

    budget_s: float
    started: float = field(default_factory=time.monotonic)
    phase: str | None = None
    stopped_at: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        stop = _current.get()
        if stop is not None:
            stop.bind(self)

    @property
    def ends_at(self) -> float:
        """The deadline on the time.monotonic clock."""
        end = self.started + self.budget_s
        stopped = self.stopped_at
        return end if stopped is None else min(end, stopped)

    def left(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.ends_at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.ends_at

    def spend(self, phase: str) -> float:
        """Enter `phase` (it spends from now on) and return the seconds left to it."""
        self.phase = phase
        return self.left()

    def on_perf_counter(self) -> float:
        """The deadline on the time.perf_counter clock, for code timed with it."""
        return time.perf_counter() + self.ends_at - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Stop:
    """An attempt's stop, owned by whoever runs the attempt (the executor): once `set`,
    every deadline made under it has ended (what polls or waits on it stops as at a
    timeout) and every closer registered with `closing` has run, so a call blocked on what
    it closed (a socket, a sandbox's process) returns. Never an exception in a thread."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._deadlines: weakref.WeakSet[Deadline] = weakref.WeakSet()
        self._closers: dict[int, Callable[[], None]] = {}
        self._ids = iter(range(1 << 62))
        self._closed = threading.Event()  # set's closers have all returned

    def is_set(self) -> bool:
        return self.reason is not None

    def bind(self, deadline: Deadline) -> None:
        """`deadline` ends when this stop is set (at once if it is)."""
        with self._lock:
            if self.reason is not None:
                deadline.stopped_at = time.monotonic()
            else:
                self._deadlines.add(deadline)

    def set(self, reason: str) -> None:
        """Stop the attempt: its deadlines end now, its closers run (once, here)."""
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
            now = time.monotonic()
            for deadline in list(self._deadlines):
                deadline.stopped_at = now
            closers, self._closers = list(self._closers.values()), {}
        for close in closers:
            with contextlib.suppress(Exception):  # a closer's failure must not stop the rest
                close()
        self._closed.set()

    @contextlib.contextmanager
    def closing(self, close: Callable[[], None]) -> Iterator[None]:
        """Run `close` if the attempt is stopped while the block runs (at once if it is
        stopped already): what the block holds is closed so its blocked call returns. The
        block ends only after a `close` that `set` took has returned."""
        with self._lock:
            key = next(self._ids)
            stopped = self.reason is not None
            if not stopped:
                self._closers[key] = close
        if stopped:
            close()
        try:
            yield
        finally:
            with self._lock:
                taken = not stopped and self._closers.pop(key, None) is None
            if taken:  # `set` took this closer and may be running it: the block ends after
                self._closed.wait()  # it (what it closes may be reaped and its pid reused next)


_current: ContextVar[Stop | None] = ContextVar("benchrig_stop", default=None)


@contextlib.contextmanager
def stop_scope(stop: Stop) -> Iterator[Stop]:
    """Run the block (an attempt, in its own thread) under `stop`."""
    token = _current.set(stop)
    try:
        yield stop
    finally:
        _current.reset(token)


def current_stop() -> Stop | None:
    """The stop of the attempt running in this thread, if it runs under one."""
    return _current.get()


@contextlib.contextmanager
def closing_on_stop(close: Callable[[], None]) -> Iterator[None]:
    """`Stop.closing` for the attempt running in this thread; nothing outside an attempt."""
    stop = _current.get()
    if stop is None:
        yield
        return
    with stop.closing(close):
        yield
