"""A pool told how many sandboxes come launches exactly that many, however its takes and its
launcher thread interleave (tests/packs/test_verify.py::test_verify_boots_no_sandbox_it_does_not_use
saw 11 launches for 10 answers). Launches are stand-ins here: only the pool's counting is
under test, each race forced at the point where it happened."""

from __future__ import annotations

import threading
from typing import Any, cast

import pytest

from benchrig.sandbox import pool as poolmod
from benchrig.sandbox.confinement import Confinement
from benchrig.sandbox.pool import MODULE_FILE, SandboxPool

OWN_UID = Confinement(interpreter="/usr/bin/python3", namespaces=True, dedicated_uid=True)


class Alive:
    """A stand-in process that is running."""

    def __init__(self, on_poll: Any = None) -> None:
        self.on_poll = on_poll

    def poll(self) -> int | None:
        if self.on_poll is not None:
            hook, self.on_poll = self.on_poll, None
            hook()
        return None


class Spare:
    """A stand-in sandbox: what the pool reads of one, and a record of its stop."""

    def __init__(self) -> None:
        self.proc = Alive()
        self.kill_is_final = False
        self.stopped = False
        self.box = self

    def stop(self) -> None:
        self.stopped = True

    def remove(self) -> None:
        pass


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[Spare]:
    made: list[Spare] = []

    def launch(*args: Any) -> Any:
        made.append(Spare())
        return made[-1]

    monkeypatch.setattr(poolmod, "_launch", launch)
    return made


def test_a_replenish_between_a_take_and_its_count_launches_nothing_more(
        launched: list[Spare]) -> None:
    """The launcher thread's replenish counted room while a take had popped its spare but not
    yet counted itself off `expected`: it saw one take still to come and no spare for it, and
    booted one that nobody took. Here the replenish runs exactly there (the popped spare's
    liveness check, the next thing the take does)."""
    with SandboxPool(OWN_UID, depth=2, expected=1) as pool:
        (spare,) = cast(list[Spare], pool.spares())
        spare.proc.on_poll = lambda: pool.replenish(MODULE_FILE)
        assert pool.take(MODULE_FILE) is cast(Any, spare)
        assert spare.proc.on_poll is None  # the replenish ran where the race was
        assert pool.spares() == []
    assert len(launched) == 1


def test_a_take_while_its_spare_is_launching_waits_for_it(
        launched: list[Spare], monkeypatch: pytest.MonkeyPatch) -> None:
    """A take that found its spare still launching started a sandbox cold: that cold start
    queued behind the launch on the one launcher thread (no sooner), and the spare was then
    left to nobody. Here the spare's launch ends only once the take has decided."""
    decided = threading.Event()
    real_start = poolmod.start

    def cold(*args: Any) -> Any:
        decided.set()  # the take went cold
        return real_start(*args)

    class Watched(threading.Condition):
        def wait(self, timeout: float | None = None) -> bool:
            decided.set()  # the take waits for the launch under way
            return super().wait(timeout)

    asked = threading.Event()

    def launch(*args: Any) -> Any:
        if not launched:  # the spare: launching until the take has decided
            asker.start()
            asked.set()
            assert decided.wait(30)
        launched.append(Spare())
        return launched[-1]

    monkeypatch.setattr(poolmod, "_launch", launch)
    monkeypatch.setattr(poolmod, "start", cold)
    taken: list[Any] = []
    pool = SandboxPool(OWN_UID, depth=2, expected=1)
    pool._launched = Watched(pool._lock)  # (an attribute the pool without the fix lacks)
    asker = threading.Thread(target=lambda: taken.append(pool.take(MODULE_FILE)))
    with pool:  # entering launches the spare
        assert asked.wait(30)
        asker.join(30)
        assert pool.spares() == []
    assert taken == [launched[0]] and len(launched) == 1


def test_a_launch_failing_with_any_error_never_leaves_a_take_waiting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A take waits for a spare being launched; a launch that failed with anything but a
    SandboxError (an OSError from os.pipe at EMFILE, a full disk under mkdtemp) left the count
    of launches under way at 1 for good, and every later take waited forever: an attempt with
    no result. The take must go on and start its own sandbox."""
    made: list[Spare] = []
    failures = iter([OSError(24, "Too many open files")])

    def launch(*args: Any) -> Any:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        made.append(Spare())
        return made[-1]

    monkeypatch.setattr(poolmod, "_launch", launch)
    taken: list[Any] = []
    with SandboxPool(OWN_UID, depth=1, expected=2) as pool:  # its first spare's launch fails
        taker = threading.Thread(target=lambda: taken.append(pool.take(MODULE_FILE)),
                                 daemon=True)
        taker.start()
        taker.join(30)  # a generous bound: the bug is waiting forever
        assert not taker.is_alive(), "the take is still waiting for a launch that failed"
    assert taken and taken[0] is made[0]
