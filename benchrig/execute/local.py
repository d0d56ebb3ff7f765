"""LocalExecutor: the attempts of a plan on threads of this process, under the executor's
rules (jobs, lanes, exclusive attempts); outcomes handed to the caller's thread."""

from __future__ import annotations

import contextlib
import itertools
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from benchrig.core.deadline import Stop, stop_scope
from benchrig.drivers.base import SilentProgress
from benchrig.execute.base import AttemptSpec, Done, Slot, Watch, Work

T = TypeVar("T")
# How long an interrupted run waits for its attempts in flight to clean up after themselves
# (their deadlines end and what they hold is closed at once; an agent's reader notices
# within 0.25 s, llama.cpp between two nodes of its graph).
STOP_GRACE_S = 3.0


class LocalExecutor:
    """Up to `jobs` attempts at once, each on a daemon thread of its own.

    Threads suit BenchRig's attempts: they wait on HTTP streams and agent processes, and
    llama.cpp and the sandbox release the GIL. Each runs under a `Stop` of its own: on
    Ctrl-C the attempts in flight are stopped so they clean up after themselves
    (`interrupt`); since only the caller's thread records, none of them leaves a result
    behind.
    """

    def __init__(self, jobs: int = 1) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {jobs}")
        self.jobs = jobs

    def run(self, plan: Sequence[AttemptSpec], work: Work[T], done: Done[T],
            watch: Watch | None = None) -> None:
        schedule = Schedule(plan, self.jobs)
        finished: queue.SimpleQueue[tuple[AttemptSpec, bool, Any]] = queue.SimpleQueue()

        def attempt(spec: AttemptSpec, slot: Slot, stop: Stop) -> None:
            try:
                with stop_scope(stop):
                    finished.put((spec, True, work(spec, slot)))
            except BaseException as exc:  # BenchRig is broken: the caller raises it
                finished.put((spec, False, exc))

        threads: dict[int, tuple[threading.Thread, Stop]] = {}

        def start_what_may() -> None:
            for spec in schedule.startable():
                slot = Slot(len(schedule.running), watch(spec) if watch else SilentProgress())
                stop = Stop()
                thread = threading.Thread(target=attempt, args=(spec, slot, stop), daemon=True,
                                          name=f"attempt-{spec.index}")
                threads[spec.index] = thread, stop
                thread.start()

        to_record: deque[tuple[AttemptSpec, Any]] = deque()

        def take(spec: AttemptSpec, ok: bool, value: Any) -> None:
            schedule.finished(spec)
            del threads[spec.index]
            if not ok:
                raise value
            to_record.append((spec, value))

        try:
            start_what_may()
            while schedule.left or to_record:
                if not to_record:
                    take(*finished.get())
                with contextlib.suppress(queue.Empty):
                    while True:  # every attempt that has finished meanwhile
                        take(*finished.get_nowait())
                start_what_may()  # before recording: no attempt waits for another's write
                spec, value = to_record.popleft()
                with interrupts_held():
                    done(spec, value)
        except BaseException:
            interrupt(list(threads.values()), STOP_GRACE_S)
            raise


def interrupt(attempts: list[tuple[threading.Thread, Stop]], grace_s: float) -> None:
    """Stop attempts still in flight by their own `Stop` (never an exception raised into a
    thread, which could land in another attempt's reused thread id or in a helper thread):
    their deadlines end and what they hold is closed, so each ends as at a timeout and its
    own cleanup runs (an agent's process group killed, a served model stopped: they live in
    sessions of their own, which Ctrl-C does not reach). Wait up to `grace_s` for them;
    what is left is abandoned (it dies with the process)."""
    for _, stop in attempts:
        stop.set("interrupted")
    end = time.monotonic() + grace_s
    for thread, _ in attempts:
        thread.join(max(0.0, end - time.monotonic()))


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C held back until the block ends (recording a result is never cut in half),
    then delivered. Signals reach only the main thread: elsewhere nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, Any]] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: caught.append((number, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            if callable(previous):
                previous(*caught[0])
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt


class Schedule:
    """Which attempts of a plan may start now: room under `jobs`, a free lane, no exclusive
    attempt in flight; an exclusive attempt waits for an empty executor and holds back
    everything after it in the plan. Each decision costs O(lanes + jobs), not O(plan)."""

    def __init__(self, plan: Sequence[AttemptSpec], jobs: int) -> None:
        self.jobs = jobs
        self.queues: dict[str | None, deque[AttemptSpec]] = {}
        for spec in sorted(plan, key=lambda s: s.index):
            self.queues.setdefault(spec.lane, deque()).append(spec)
        self.barriers = deque(spec for spec in sorted(plan, key=lambda s: s.index)
                              if spec.exclusive)
        self.running: dict[int, AttemptSpec] = {}
        self.left = len(plan)

    def startable(self) -> list[AttemptSpec]:
        """The attempts to start now, in plan order; each is counted as running."""
        if any(spec.exclusive for spec in self.running.values()):
            return []
        room = self.jobs - len(self.running)
        barrier = self.barriers[0].index if self.barriers else None
        busy = {spec.lane for spec in self.running.values()}
        heads: list[AttemptSpec] = []
        for lane, waiting in self.queues.items():
            if lane is None:
                heads.extend(itertools.islice(waiting, room))
            elif lane not in busy and waiting:
                heads.append(waiting[0])
        chosen = sorted((s for s in heads if barrier is None or s.index < barrier),
                        key=lambda s: s.index)[:room]
        if not chosen and not self.running and self.barriers:
            chosen = [self.barriers.popleft()]
        for spec in chosen:
            self.queues[spec.lane].remove(spec)  # a head: removed in O(1)
            self.running[spec.index] = spec
        return chosen

    def finished(self, spec: AttemptSpec) -> None:
        del self.running[spec.index]
        self.left -= 1
