"""One level of a load sweep on one event loop: fixed concurrency (closed loop) or a constant
or Poisson request rate (open loop), warm-up first, bounded by a count or a duration."""

from __future__ import annotations

import asyncio
import random
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from benchrig.core.deadline import Stop, current_stop
from benchrig.execute.local import interrupts_held
from benchrig.load.wire import Endpoint, Record, stream_chat

# Open loop: requests in flight at most (file descriptors are finite); a send that waits for
# a slot is late, and its lateness is recorded.
MAX_IN_FLIGHT = 1024
T = TypeVar("T")


@dataclass(frozen=True)
class Level:
    """One point of a sweep: `concurrency` streams, or `rate` requests/s."""

    concurrency: int | None = None
    rate: float | None = None
    arrivals: str = "constant"  # rate only: constant | poisson
    requests: int | None = None  # a count bound (measured requests)
    duration_s: float | None = None  # a time bound: no request starts after it
    warmup: int = 0  # requests sent first at this level, recorded apart
    seed: int = 0

    @property
    def mode(self) -> str:
        return "concurrency" if self.concurrency is not None else "rate"

    @property
    def value(self) -> float:
        return float(self.concurrency if self.concurrency is not None else self.rate or 0)


@dataclass(frozen=True)
class Workload:
    """What every request of a sweep sends: the endpoint, the model, the prompts (used in
    turn), the output length and the body's other fields."""

    endpoint: Endpoint
    model: str
    prompts: tuple[str, ...]
    max_tokens: int
    timeout_s: float
    extra: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = None

    def body(self, index: int) -> dict[str, Any]:
        return {"model": self.model, "stream": True,
                "stream_options": {"include_usage": True},
                "messages": [{"role": "user",
                              "content": self.prompts[index % len(self.prompts)]}],
                "max_tokens": self.max_tokens, **self.extra}


@dataclass
class LevelRun:
    """What one level measured: its requests in start order, the warm-up's, how long the
    measured part took, and (open loop) how late each send was; `stopped`: the run's stop
    came first, and the level, cut short, measured nothing to keep."""

    level: Level
    records: list[Record]
    warmup: list[Record]
    duration_s: float
    lag_ms: list[float]
    max_in_flight: int
    stopped: bool = False


def arrivals(rate: float, kind: str, seed: int, count: int | None,
             duration_s: float | None) -> list[float]:
    """Send times (s from the level's start) at `rate` per second: evenly spaced, or a
    Poisson process (exponential gaps, seeded: the same seed gives the same times)."""
    rng = random.Random(seed)
    times: list[float] = []
    t = 0.0
    while (count is None or len(times) < count) and (duration_s is None or t < duration_s):
        times.append(t)
        t += rng.expovariate(rate) if kind == "poisson" else 1 / rate
    return times


async def _closed(work: Workload, streams: int, count: int | None, duration_s: float | None,
                  first: int) -> tuple[list[Record], int]:
    """`streams` workers, each sending its next request when its last ends."""
    records: dict[int, Record] = {}
    started = 0
    stop_at = None if duration_s is None else time.perf_counter() + duration_s

    async def worker() -> None:
        nonlocal started
        while (count is None or started < count) and (
                stop_at is None or time.perf_counter() < stop_at):
            index = started
            started += 1
            records[index] = await stream_chat(work.endpoint, work.body(first + index),
                                               work.timeout_s, work.api_key)

    await asyncio.gather(*(worker() for _ in range(streams)))
    return [records[i] for i in sorted(records)], streams


async def _open(work: Workload, times: list[float], first: int
                ) -> tuple[list[Record], list[float], int]:
    """One request at each of `times`, whatever is still in flight (up to MAX_IN_FLIGHT)."""
    slots = asyncio.Semaphore(MAX_IN_FLIGHT)
    records: list[Record | None] = [None] * len(times)
    lag: list[float] = [0.0] * len(times)
    in_flight = peak = 0
    start = time.perf_counter()

    async def one(index: int) -> None:
        nonlocal in_flight, peak
        async with slots:
            lag[index] = max(0.0, (time.perf_counter() - start - times[index]) * 1000)
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                records[index] = await stream_chat(work.endpoint, work.body(first + index),
                                                   work.timeout_s, work.api_key)
            finally:
                in_flight -= 1

    tasks = []
    for index, due in enumerate(times):
        wait = start + due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(one(index)))
    await asyncio.gather(*tasks)
    return [r for r in records if r is not None], lag, peak


async def _level(work: Workload, level: Level) -> LevelRun:
    warm: list[Record] = []
    if level.warmup:
        streams = max(1, min(level.warmup, level.concurrency or 1))
        warm, _ = await _closed(work, streams, level.warmup, None, 0)
    began = time.perf_counter()
    if level.concurrency is not None:
        records, peak = await _closed(work, level.concurrency, level.requests,
                                      level.duration_s, level.warmup)
        lag: list[float] = []
    else:
        assert level.rate is not None
        times = arrivals(level.rate, level.arrivals, level.seed, level.requests,
                         level.duration_s)
        records, lag, peak = await _open(work, times, level.warmup)
    return LevelRun(level, records, warm, time.perf_counter() - began, lag, peak)


def run_level(work: Workload, level: Level, loop: asyncio.Runner | None = None) -> LevelRun:
    """Run one level on `loop` (a sweep's `event_loop()`), else on a fresh one. Ctrl-C
    propagates as KeyboardInterrupt: the finished levels are already recorded by the
    caller. The stop of the attempt running in this thread (`core.deadline.Stop`) ends the
    level at once, its requests in flight cancelled: a run marked `stopped`."""
    if level.requests is None and level.duration_s is None:
        raise ValueError("a level needs a count or a duration bound")
    if loop is None:
        with event_loop() as fresh:
            return run_level(work, level, fresh)
    stop = current_stop()
    if stop is None:
        return interruptible(loop, lambda: _level(work, level))
    return interruptible(loop, lambda: _stoppable(work, level, stop))


async def _stoppable(work: Workload, level: Level, stop: Stop) -> LevelRun:
    """`_level` cancelled when `stop` is set (at once if it is): a stopped run, not an
    exception (a Ctrl-C's cancel, with no stop set, still goes on as one)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def cancel() -> None:  # `set` runs it in the stopping thread: handed to the loop's
        loop.call_soon_threadsafe(task.cancel)

    try:
        with stop.closing(cancel):
            return await _level(work, level)
    except asyncio.CancelledError:
        if not stop.is_set():
            raise
        return LevelRun(level, [], [], 0.0, [], 0, stopped=True)


def interruptible(runner: asyncio.Runner, level: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `level()` makes to its end on `runner`'s loop; a Ctrl-C meanwhile
    cancels it and is then a KeyboardInterrupt, however the coroutine took the cancel.

    Not asyncio.Runner.run's own translation, which makes the task before its SIGINT handler
    is set (a Ctrl-C in between left the task to the loop's shutdown with its coroutine closed
    under it: a traceback), resets its interrupt count after the handler is live (a Ctrl-C in
    between escaped as CancelledError) and trusts the task's uncancel() count (a coroutine
    that swallows the cancel ends normally, and the Ctrl-C is lost). Here the handler comes
    first, then the coroutine and its task: a Ctrl-C before the handler finds nothing made."""
    loop = runner.get_loop()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return loop.run_until_complete(level())  # signals are not ours to take here
    interrupted: list[int] = []  # set by the handler, read only once the loop has returned
    tasks: list[asyncio.Task[T]] = []

    def on_sigint(number: int, frame: object) -> None:
        if interrupted:
            raise KeyboardInterrupt  # a second Ctrl-C: the level is not waited for
        interrupted.append(number)
        for task in tasks:
            loop.call_soon_threadsafe(task.cancel)  # also wakes a loop blocked in select()

    try:
        signal.signal(signal.SIGINT, on_sigint)
        tasks.append(loop.create_task(level()))
        if interrupted:  # it came before the task was there to cancel
            tasks[0].cancel()
        done = loop.run_until_complete(tasks[0])
    except BaseException as exc:
        if not interrupted or isinstance(exc, KeyboardInterrupt):
            raise
        # however the level took its cancel (a cleanup that raised included), the user
        # stopped it: an interrupt, the level's own error kept as its cause
        raise KeyboardInterrupt from (None if isinstance(exc, asyncio.CancelledError) else exc)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if interrupted:
        raise KeyboardInterrupt  # the level ended as the Ctrl-C came: the user still stopped it
    return done


@contextmanager
def event_loop() -> Iterator[asyncio.Runner]:
    """One event loop for a sweep's levels, built whole before a Ctrl-C is let in: a
    KeyboardInterrupt raised while asyncio builds a loop leaves half a loop whose finalizer
    prints a traceback ("Exception ignored … no attribute '_ssock'"). While a level runs,
    `interruptible` turns Ctrl-C into the level's cancellation and a KeyboardInterrupt."""
    try:
        with interrupts_held():
            loop = asyncio.new_event_loop()
    except KeyboardInterrupt:
        loop.close()  # held while it was built: whole, and closed before the interrupt goes on
        raise
    with asyncio.Runner(loop_factory=lambda: loop) as runner:
        yield runner
