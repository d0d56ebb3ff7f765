"""One walk of /proc a sandbox: a pool's census (the sweep's walk) serves the next uid
allocation, and never hands out a uid a live process, or a sandbox of its own, may hold."""

from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from benchrig import sandbox
from benchrig.core.errors import SandboxError
from benchrig.sandbox import Limits, SandboxPool, census, confinement
from benchrig.sandbox.census import Census
from benchrig.sandbox.confinement import Confinement
from tests.helpers.processes import start_hidden

BASE = 1_900_000_000
ONE = (BASE, 1)  # a block of one uid: whether it may be handed out is then a yes or a no
TWO = (BASE, 2)
LIMITS = Limits(cpu_s=5, address_space_mb=512, processes=24, scratch_mb=4)


def conf(block: tuple[int, int]) -> Confinement:
    return Confinement(interpreter="/usr/bin/python3", namespaces=True, dedicated_uid=True,
                       uid_block=block)


class Proc:
    """A stand-in /proc whose processes the test sets, and a clock the test moves."""

    def __init__(self) -> None:
        self.processes: dict[int, int] = {}  # pid → uid
        self.now = 100.0
        self.walks = 0

    def walk(self) -> dict[int, int]:
        self.walks += 1
        return dict(self.processes)

    def clock(self) -> float:
        return self.now


def _census(**given: Any) -> Census:
    """A census over a stand-in /proc, whatever its block's size, with uids handed out of
    its own (the process's, shared by every pool, would carry over between tests)."""
    return Census(min_block=1, handed_out=census.HandedOut(), **given)


def test_allocation_never_returns_a_uid_a_live_process_held_at_its_census() -> None:
    proc = Proc()
    proc.processes = {4242: BASE}  # another process already runs as the block's one uid
    count = _census(clock=proc.clock, walk=proc.walk)
    with pytest.raises(SandboxError, match="no free uid"):
        count.allocate(conf(ONE))
    assert proc.walks == 1


def test_a_census_that_saw_someone_elses_sandbox_is_not_believed() -> None:
    """A process of the block that no pool of this process handed out is another BenchRig's
    (or a Ray worker's beside it): its next sandboxes would be unseen by a census, so every
    allocation walks while one shows, as before the census."""
    proc = Proc()
    proc.processes = {4242: BASE}
    count = _census(clock=proc.clock, walk=proc.walk)
    count.walk()  # a sweep's walk, fresh, that saw it
    proc.now += 0.1
    with pytest.raises(SandboxError, match="no free uid"):
        count.allocate(conf(ONE))
    assert proc.walks == 2  # walked anew, not believed
    proc.processes = {}  # it ended: the next allocation's own walk shows the uid free
    proc.now += 0.1
    assert count.allocate(conf(ONE)) == BASE
    assert proc.walks == 3


def test_a_small_uid_block_walks_at_every_allocation() -> None:
    """A container's block (the upper half of its uid map) is no 2^24: a collision with a
    sandbox started since the census began is no longer negligible there."""
    proc = Proc()
    count = Census(handed_out=census.HandedOut(), clock=proc.clock, walk=proc.walk)
    count.walk()
    proc.now += 0.1
    count.allocate(conf((BASE, 1 << 15)))
    assert proc.walks == 2
    count.allocate(conf((BASE, 1 << 24)))  # the dedicated block: the fresh census serves
    assert proc.walks == 2


def test_two_pools_of_one_process_never_share_a_live_uid() -> None:
    """Each pool has a census of its own, but the uids handed out are the process's: a run's
    pool and a library caller's cold pool never get one uid at once."""
    proc = Proc()
    first = Census(min_block=1, clock=proc.clock, walk=proc.walk)
    second = Census(min_block=1, clock=proc.clock, walk=proc.walk)
    second.walk()  # fresh, and seeing nothing of the first pool's sandbox to come
    try:
        assert first.allocate(conf(ONE)) == BASE
        proc.now += 0.1
        with pytest.raises(SandboxError, match="no free uid"):
            second.allocate(conf(ONE))
    finally:
        census.HANDED_OUT.proven_gone((BASE,))


def test_allocation_never_returns_a_uid_handed_out_since_its_census_began() -> None:
    proc = Proc()
    count = _census(clock=proc.clock, walk=proc.walk)
    count.walk()  # no process of the block
    proc.now += 0.1
    first = count.allocate(conf(TWO))
    proc.now += 0.1
    second = count.allocate(conf(TWO))
    assert {first, second} == {BASE, BASE + 1}  # its neighbour's uid is never handed out
    with pytest.raises(SandboxError, match="no free uid"):
        count.allocate(conf(TWO))
    assert proc.walks == 1


def test_a_uid_handed_out_before_a_newer_census_stays_out_until_it_is_swept() -> None:
    """A spare launched just before a sweep's walk began may not have switched to its uid
    when the walk passed it: the walk does not show it, and it must still not be reused."""
    proc = Proc()
    count = _census(clock=proc.clock, walk=proc.walk)
    assert count.allocate(conf(ONE)) == BASE
    proc.now += 0.2
    assert count.sweep(BASE + 7) == 0  # another sandbox's sweep: a newer census, without BASE
    proc.now += 0.1
    with pytest.raises(SandboxError, match="no free uid"):
        count.allocate(conf(ONE))
    assert count.sweep(BASE) == 0  # proven gone: only now is it free again
    proc.now += 0.1
    assert count.allocate(conf(ONE)) == BASE


def test_a_census_older_than_the_bound_is_never_used() -> None:
    proc = Proc()
    count = _census(clock=proc.clock, walk=proc.walk, bound_s=1.0)
    count.walk()  # nothing of the block runs
    proc.processes = {4242: BASE}  # then a process of the block's one uid starts
    proc.now += 1.01
    with pytest.raises(SandboxError, match="no free uid"):
        count.allocate(conf(ONE))  # walked anew, and saw it
    assert proc.walks == 2
    proc.processes = {}
    count.walk()  # a sweep's walk: nothing of the block
    proc.processes = {4242: BASE}  # started after it began: unseen
    proc.now += 0.5  # within the bound of that walk: believed, no walk
    assert count.allocate(conf(ONE)) == BASE  # the residual risk security.md names
    assert proc.walks == 3


def test_an_older_walk_finishing_late_does_not_replace_a_newer_census() -> None:
    proc = Proc()
    nested = [True]

    def walk() -> dict[int, int]:
        if nested:  # walk A: while it reads, walk B begins and ends, and sees the uid held
            nested.clear()
            proc.now += 0.1
            proc.processes = {4242: BASE}
            count.walk()
            proc.processes = {}
            return {}  # A passed that process before it switched to the uid
        return dict(proc.processes)

    count = _census(clock=proc.clock, walk=walk)
    count.walk()  # A, begun before B: B's census (it saw another's sandbox) stands
    proc.now += 0.1
    walked = count.walks
    count.allocate(conf(TWO))
    assert count.walks == walked + 1  # B's census is not believed: walked anew


def test_the_census_sweep_still_rejects_a_process_that_survives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    proc = Proc()
    count = _census(clock=proc.clock, walk=proc.walk)
    assert count.allocate(conf(ONE)) == BASE
    proc.processes = {4242: BASE}  # a process of the uid that no SIGKILL takes down
    killed: list[int] = []
    real_kill = os.kill

    def kill(pid: int, sig: int) -> None:
        if pid == 4242:
            killed.append(sig)
            return
        real_kill(pid, sig)

    monkeypatch.setattr(confinement.os, "kill", kill)
    with pytest.raises(SandboxError, match="survived SIGKILL"):
        count.sweep(BASE, timeout_s=0.05)
    monkeypatch.undo()
    assert killed
    proc.processes = {}  # gone unseen by any sweep: a walk no longer shows it
    count.walk()
    proc.now += 0.1
    with pytest.raises(SandboxError, match="no free uid"):  # not proven gone: still out
        count.allocate(conf(ONE))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to start a process as another uid")
def test_the_census_sweep_kills_a_real_hidden_process_and_then_knows_it_gone() -> None:
    count = Census()
    uid = count.allocate(replace(confinement.detect(), dedicated_uid=True))
    assert uid is not None
    start_hidden(uid)
    assert uid in confinement.live_processes().values()
    assert count.sweep(uid) >= 1
    assert uid not in confinement.live_processes().values()


@pytest.mark.skipif(sandbox.detect().level != sandbox.FULL,
                    reason="the census serves the pool's dedicated uids")
def test_a_pool_walks_proc_once_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: one walk to allocate each uid and one to sweep it. Now the sweep's walk serves
    the next allocation (the bound raised so a slow machine cannot make it stale)."""
    monkeypatch.setattr(census, "CENSUS_BOUND_S", 3600.0)
    walks: list[str] = []
    real = confinement.live_processes

    def counted() -> dict[int, int]:
        walks.append(threading.current_thread().name)
        # other test workers' sandboxes are another process's: seen, they make every
        # allocation walk (test_a_census_that_saw_someone_elses_sandbox_is_not_believed)
        base, size = pool.confinement.uid_block
        return {pid: uid for pid, uid in real().items()
                if not base <= uid < base + size or uid in census.HANDED_OUT}

    monkeypatch.setattr(confinement, "live_processes", counted)
    uids = []
    with SandboxPool(limits=LIMITS, prestart=False) as pool:
        for _ in range(5):
            proc = pool.take("solution.py")
            proc.ready(time.monotonic() + 30)
            uids.append(proc.box.uid)
            if not pool.release(proc):
                proc.stop()
                proc.box.remove()
            pool.settle()  # swept before the next one is launched: its walk is the census
    assert len(set(uids)) == 5
    allocating = [name for name in walks if "launcher" in name]
    assert len(allocating) == 1  # the first allocation only; the others used a sweep's walk
    assert len(walks) - len(allocating) >= 5  # and every sandbox was still swept
    assert not set(uids) & set(real().values())


def first_sweep_held(monkeypatch: pytest.MonkeyPatch
                     ) -> tuple[threading.Event, list[tuple[int, ...]]]:
    """Every census sweep recorded (its uids), the first held until the event is set: the
    reaper is then busy while more sandboxes are released."""
    hold = threading.Event()
    calls: list[tuple[int, ...]] = []
    real = Census.sweep

    def sweep(self: Census, *uids: int, timeout_s: float = 3.0) -> int:
        calls.append(uids)
        if len(calls) == 1:
            assert hold.wait(30)
        return real(self, *uids, timeout_s=timeout_s)

    monkeypatch.setattr(Census, "sweep", sweep)
    return hold, calls


def released(pool: SandboxPool, count: int) -> list[int]:
    """Take `count` sandboxes, prove each booted, release them all; their uids."""
    procs = [pool.take("solution.py") for _ in range(count)]
    for proc in procs:
        proc.ready(time.monotonic() + 30)
        assert pool.release(proc)
    return [proc.box.uid for proc in procs if proc.box.uid is not None]


@pytest.mark.skipif(sandbox.detect().level != sandbox.FULL,
                    reason="only a final kill (pid namespace, own uid) is reaped later")
def test_one_walk_sweeps_every_sandbox_the_reaper_has_queued(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reaper held in its first sweep while two more sandboxes are released: it then
    sweeps both with one call, and every process of all three is gone."""
    hold, calls = first_sweep_held(monkeypatch)
    with SandboxPool(limits=LIMITS, prestart=False) as pool:
        first = released(pool, 1)
        for _ in range(500):  # until the reaper is in that first sweep
            if calls:
                break
            time.sleep(0.01)
        rest = released(pool, 2)
        hold.set()
        pool.settle()
    assert calls == [tuple(first), tuple(rest)]
    assert not set(first + rest) & set(confinement.live_processes().values())


@pytest.mark.skipif(sandbox.detect().level != sandbox.FULL,
                    reason="only a final kill (pid namespace, own uid) is reaped later")
def test_a_survivor_of_any_uid_in_a_batch_fails_the_sweep(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A process of the second uid of a batch that no SIGKILL ends (a stand-in pid the walk
    keeps showing): the batch's sweep is not proven, and the pool refuses what comes next."""
    hold, calls = first_sweep_held(monkeypatch)
    pool = SandboxPool(limits=LIMITS, prestart=False)
    try:
        released(pool, 1)
        for _ in range(500):
            if calls:
                break
            time.sleep(0.01)
        rest = released(pool, 2)
        ghost = 2**22 + 4242  # above the kernel's pid limit (2^22): no real process has it
        real_walk, real_kill = confinement.live_processes, os.kill
        monkeypatch.setattr(confinement, "live_processes",
                            lambda: {**real_walk(), ghost: rest[1]})
        monkeypatch.setattr(confinement.os, "kill",
                            lambda pid, sig: None if pid == ghost else real_kill(pid, sig))
        hold.set()
        with pytest.raises(SandboxError, match=f"could not be verified.*{rest[1]}"):
            pool.settle()
        with pytest.raises(SandboxError, match="could not be verified"):
            pool.take("solution.py")
    finally:
        hold.set()
        monkeypatch.undo()
        with pytest.raises(SandboxError, match="could not be verified"):
            pool.close()
