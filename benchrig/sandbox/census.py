"""One pool's census of /proc: the uid sweep's walk also serves the next uid allocation.

Every sandbox cost two walks of every process's /proc/<pid>/status (39 % of BenchRig's own
CPU in `verify`): one to find a uid no process holds (`allocate_uid`, on the launcher
thread, on the path to the next spare) and one to prove none is left (`sweep_uid`, after
the kill). A census keeps the last walk a sweep (or an allocation) made, with when it began,
and an allocation within CENSUS_BOUND_S of that beginning checks against it instead of
walking again — together with every uid this census handed out that no sweep has proven
gone yet: those handed out since the walk began, which it cannot show, and those handed out
just before, whose spare may not have switched to its uid when the walk passed it. Older
than the bound, an allocation walks as before; so does one whose census shows a process
of the block that no pool of this process handed out (another BenchRig, a Ray worker beside
it: their sandboxes started since the walk began would be unseen), and one from a block
smaller than the dedicated one (a container's: a collision there is not one in 2^24). The
uids handed out are kept process-wide (`HANDED_OUT`): every pool of the process excludes
every other's. The sweep walks after the kill until no process of its uids is left
(docs/security.md, "One census of /proc serves a sweep and the next uid").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from benchrig.sandbox import confinement
from benchrig.sandbox.confinement import Confinement

CENSUS_BOUND_S = 1.0  # how old a walk may be, from its beginning, to serve an allocation
CENSUS_MIN_BLOCK = 1 << 24  # a smaller uid block (a container's) walks at every allocation


class HandedOut:
    """The uids handed out that no sweep has proven gone yet; thread-safe. One per process
    (`HANDED_OUT`), shared by every pool: two pools of one process (a run and a library
    caller's cold pool) never hand out each other's live uid."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uids: set[int] = set()

    def claim(self, block: tuple[int, int], held: frozenset[int]) -> int:
        """A random uid of `block` neither in `held` nor handed out, handed out: one step,
        so two pools drawing at once never get the same one."""
        with self._lock:
            uid = confinement.pick_uid(block, _Excluded(held, self._uids))
            self._uids.add(uid)
            return uid

    def proven_gone(self, uids: tuple[int, ...]) -> None:
        with self._lock:
            self._uids.difference_update(uids)

    def __contains__(self, uid: object) -> bool:
        with self._lock:
            return uid in self._uids


HANDED_OUT = HandedOut()


class Census:
    """pid → uid as of one walk of /proc, owned by one pool; thread-safe.

    `clock` (monotonic seconds), `bound_s`, `min_block` and `handed_out` are injected by
    tests; `walk` defaults to `confinement.live_processes`, looked up at each call."""

    def __init__(self, *, bound_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 walk: Callable[[], dict[int, int]] | None = None,
                 min_block: int = CENSUS_MIN_BLOCK,
                 handed_out: HandedOut = HANDED_OUT) -> None:
        self._bound_s = CENSUS_BOUND_S if bound_s is None else bound_s
        self._clock = clock
        self._walk_with = walk
        self._min_block = min_block
        self._lock = threading.Lock()
        self._began: float | None = None  # when the walk behind `_held` began
        self._held: frozenset[int] = frozenset()  # uids of the live processes it found
        self._unswept = handed_out  # handed out, not yet proven gone by a sweep
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
        base, size = conf.uid_block
        with self._lock:
            fresh = (size >= self._min_block and self._began is not None
                     and self._clock() - self._began <= self._bound_s
                     and not any(base <= uid < base + size and uid not in self._unswept
                                 for uid in self._held))  # no one else's sandbox seen
        if not fresh:
            self.walk()
        with self._lock:
            return self._unswept.claim(conf.uid_block, self._held)

    def sweep(self, *uids: int, timeout_s: float = confinement.SWEEP_TIMEOUT_S) -> int:
        """`confinement.sweep_uids` (one walk serves every uid), each of its walks kept as the
        census; uids proven gone are no longer kept out as unswept (a sweep that fails keeps
        them all out)."""
        killed = confinement.sweep_uids(uids, timeout_s, walk=self.walk)
        self._unswept.proven_gone(uids)
        return killed


class _Excluded:
    """The uids an allocation must not return, without copying the sets."""

    def __init__(self, *parts: frozenset[int] | set[int]) -> None:
        self._parts = parts

    def __contains__(self, uid: object) -> bool:
        return any(uid in part for part in self._parts)
