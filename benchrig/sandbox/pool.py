"""Where candidate processes come from: one pool per run, the next sandbox started ahead.

A spare is a sandbox that has been launched — fresh uid, namespaces, limits set — but has
run no candidate code: the code arrives with its import request. It is used once, for
one candidate process, and then stopped and swept like any other; nothing carries over
from one attempt to the next. Starting a sandbox costs bubblewrap plus an interpreter
(tens of milliseconds); taken from here, an attempt pays only for its own calls.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from types import TracebackType

from benchrig.core.errors import SandboxError
from benchrig.sandbox.confinement import Confinement, detect
from benchrig.sandbox.process import Box, CandidateProcess, Limits


def start(confinement: Confinement, limits: Limits, module_file: str) -> CandidateProcess:
    """Launch a sandbox now (its hello is read when it is first used)."""
    box = Box.create(confinement, module_file)
    try:
        return CandidateProcess(box, limits)
    except BaseException:
        box.remove()
        raise


def discard(proc: CandidateProcess) -> None:
    """Stop a candidate process that will not be used, and remove its box."""
    with contextlib.suppress(SandboxError):
        proc.stop()
    proc.box.remove()


class SandboxPool:
    """The sandboxes of one run, all confined as `confinement` says, with `limits`.

    The defaults (the one place they are chosen): the strongest confinement that works
    here (`detect()`, tried when first needed) and `Limits()`. With `prestart`, whenever a
    sandbox is taken its replacement is launched at once, so it boots while the attempt
    that took the last one runs (back to back, the next attempt finds it ready); `depth`
    spares are kept per module file. Without `prestart`, every sandbox starts cold. Close
    the pool (or use it as a context manager) to stop its spares; one left open is closed
    at exit.
    """

    def __init__(self, confinement: Confinement | None = None, limits: Limits | None = None,
                 *, prestart: bool = True, depth: int = 1) -> None:
        self._confinement = confinement
        self.limits = limits or Limits()
        self.prestart = prestart
        self.depth = depth
        self._lock = threading.Lock()
        # by the candidate module's file name, oldest (most likely booted) first
        self._spares: dict[str, list[CandidateProcess]] = {}
        self._closed = False
        self._at_exit = False

    @property
    def confinement(self) -> Confinement:
        if self._confinement is None:
            self._confinement = detect()
        return self._confinement

    def take(self, module_file: str) -> CandidateProcess:
        """The oldest spare, else a sandbox started now; its replacement is launched first."""
        while True:
            with self._lock:
                waiting = self._spares.get(module_file) or []
                spare = waiting.pop(0) if waiting else None
            if spare is None:
                taken = start(self.confinement, self.limits, module_file)
                break
            if spare.proc.poll() is None:
                taken = spare
                break
            discard(spare)  # it died waiting (killed from outside): never hand that out
        self.replenish(module_file)
        return taken

    def replenish(self, module_file: str) -> None:
        """Have `depth` spares ready for the next attempts (nothing when cold or closed)."""
        # Without a uid of its own a candidate could tamper with a spare of its own uid (and
        # so with the next attempt): such sandboxes start cold, after the last one is swept.
        if not self.prestart or self._closed or not self.confinement.dedicated_uid:
            return
        while len(self._spares.get(module_file) or ()) < self.depth:
            try:
                spare = start(self.confinement, self.limits, module_file)
            except SandboxError:
                return  # the next attempt will start one itself, and report the failure
            with self._lock:
                waiting = self._spares.setdefault(module_file, [])
                extra = spare if self._closed or len(waiting) >= self.depth else None
                if extra is None:
                    waiting.append(spare)
                if not self._at_exit:  # bubblewrap would take it down with BenchRig too
                    atexit.register(self.close)
                    self._at_exit = True
            if extra is not None:
                discard(extra)
                return

    def spares(self) -> list[CandidateProcess]:
        """The sandboxes waiting for an attempt."""
        with self._lock:
            return [proc for waiting in self._spares.values() for proc in waiting]

    def close(self) -> None:
        """Stop every spare; later attempts still get sandboxes, started cold."""
        with self._lock:
            spares = [proc for waiting in self._spares.values() for proc in waiting]
            self._spares.clear()
            self._closed = True
            if self._at_exit:
                atexit.unregister(self.close)
                self._at_exit = False
        for proc in spares:
            discard(proc)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
