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
    here (`detect()`, tried when first needed) and `Limits()`. With `prestart`, the sandbox
    for the next candidate process is launched when an attempt ends (`replenish`); without
    it, every one starts cold. Close the pool (or use it as a context manager) to stop its
    spare; one left open is closed at exit.
    """

    def __init__(self, confinement: Confinement | None = None, limits: Limits | None = None,
                 *, prestart: bool = True) -> None:
        self._confinement = confinement
        self.limits = limits or Limits()
        self.prestart = prestart
        self._lock = threading.Lock()
        self._spares: dict[str, CandidateProcess] = {}  # by the candidate module's file name
        self._closed = False
        self._at_exit = False

    @property
    def confinement(self) -> Confinement:
        if self._confinement is None:
            self._confinement = detect()
        return self._confinement

    def take(self, module_file: str) -> CandidateProcess:
        """The spare if one is ready, else a sandbox started now."""
        with self._lock:
            spare = self._spares.pop(module_file, None)
        if spare is not None:
            if spare.proc.poll() is None:
                return spare
            discard(spare)  # it died waiting (killed from outside): never hand that out
        return start(self.confinement, self.limits, module_file)

    def replenish(self, module_file: str) -> None:
        """Have a spare ready for the next attempt (nothing when cold or closed)."""
        # Without a uid of its own a candidate could tamper with a spare of its own uid (and
        # so with the next attempt): such sandboxes start cold, after the last one is swept.
        if (not self.prestart or not self.confinement.dedicated_uid or self._closed
                or module_file in self._spares):
            return
        try:
            spare = start(self.confinement, self.limits, module_file)
        except SandboxError:
            return  # the next attempt will start one itself, and report the failure
        with self._lock:
            extra = self._spares.pop(module_file, None)
            self._spares[module_file] = spare
            if not self._at_exit:  # bubblewrap would take it down with BenchRig too
                atexit.register(self.close)
                self._at_exit = True
        if extra is not None:
            discard(extra)

    def spares(self) -> list[CandidateProcess]:
        """The sandboxes waiting for an attempt."""
        with self._lock:
            return list(self._spares.values())

    def close(self) -> None:
        """Stop every spare; later attempts still get sandboxes, started cold."""
        with self._lock:
            spares = list(self._spares.values())
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
