"""One pool's census of /proc: the uid sweep's walk also serves the next uid allocation.

Every sandbox cost two walks of every process's /proc/<pid>/status (39 % of BenchRig's own
CPU in `verify`): one to find a uid no process holds (`allocate_uid`, on the launcher
thread, on the path to the next spare) and one to prove none is left (`sweep_uid`, after
the kill). A census keeps the last walk a sweep (or an allocation) made, with when it began,
and an allocation within CENSUS_BOUND_S of that beginning checks against it instead of
walking again — together with every uid this census handed out that no sweep has proven
gone yet: those handed out since the walk began, which it cannot show, and those handed out
just before, whose spare may not have switched to its uid when the walk passed it. Older
than the bound, an allocation walks as before. The sweep itself is unchanged: it walks
after the kill until no process of the uid is left (docs/security.md, "One census of /proc
serves a sweep and the next uid").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from benchrig.sandbox import confinement
from benchrig.sandbox.confinement import Confinement

CENSUS_BOUND_S = 1.0  # how old a walk may be, from its beginning, to serve an allocation


class Census:
    """pid → uid as of one walk of /proc, owned by one pool; thread-safe.

    `clock` (monotonic seconds) and `bound_s` are injected by tests; `walk` defaults to
    `confinement.live_processes`, looked up at each call."""

    def __init__(self, *, bound_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 walk: Callable[[], dict[int, int]] | None = None) -> None:
        self._bound_s = CENSUS_BOUND_S if bound_s is None else bound_s
        self._clock = clock
        self._walk_with = walk
        self._lock = threading.Lock()
        self._began: float | None = None  # when the walk behind `_held` began
        self._held: frozenset[int] = frozenset()  # uids of the live processes it found
        self._unswept: set[int] = set()  # handed out, not yet proven gone by a sweep
        self.walks = 0  # walks made, for the benchmark and the tests

    def walk(self) -> dict[int, int]:
        """Walk /proc now; what it found becomes the census unless a newer walk began."""
        began = self._clock()
        found = (self._walk_with or confinement.live_processes)()
        with self._lock:
            self.walks += 1
            if self._began is None or began >= self._began:
                self._began = began
                self._held = frozenset(found.values())
        return found

    def allocate(self, conf: Confinement) -> int | None:
        """A fresh uid of the block that no live process held at the census and that is not
        one this census handed out and no sweep has proven gone since (whether handed out
        before the census began or after); a census older than the bound is walked anew.
        None without a dedicated uid."""
        if not conf.dedicated_uid:
            return None
        with self._lock:
            fresh = self._began is not None and self._clock() - self._began <= self._bound_s
        if not fresh:
            self.walk()
        with self._lock:
            uid = confinement.pick_uid(conf.uid_block, _Excluded(self._held, self._unswept))
            self._unswept.add(uid)
        return uid

    def sweep(self, *uids: int, timeout_s: float = confinement.SWEEP_TIMEOUT_S) -> int:
        """`confinement.sweep_uids` (one walk serves every uid), each of its walks kept as the
        census; uids proven gone are no longer kept out as unswept (a sweep that fails keeps
        them all out)."""
        killed = confinement.sweep_uids(uids, timeout_s, walk=self.walk)
        with self._lock:
            self._unswept.difference_update(uids)
        return killed


class _Excluded:
    """The uids an allocation must not return, without copying the sets."""

    def __init__(self, *parts: frozenset[int] | set[int]) -> None:
        self._parts = parts

    def __contains__(self, uid: object) -> bool:
        return any(uid in part for part in self._parts)
