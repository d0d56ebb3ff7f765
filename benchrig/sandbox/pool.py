"""Pre-started sandboxes: the next candidate process starts before anyone waits for it.

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
from collections.abc import Iterator

from benchrig.errors import SandboxError
from benchrig.sandbox.confinement import Confinement
from benchrig.sandbox.process import Box, CandidateProcess, Limits

PRESTART = True  # False: every candidate process is started cold (benchmarks compare both)
MAX_SPARES = 4  # one per (confinement, limits) in use; the oldest goes when more are asked
_lock = threading.Lock()
_spares: dict[tuple[Confinement, Limits, str], CandidateProcess] = {}
_registered = False


def start(confinement: Confinement, limits: Limits, module_file: str) -> CandidateProcess:
    """Launch a sandbox now (its hello is read when it is first used)."""
    box = Box.create(confinement, module_file)
    try:
        return CandidateProcess(box, limits)
    except BaseException:
        box.remove()
        raise


def take(confinement: Confinement, limits: Limits, module_file: str) -> CandidateProcess:
    """A spare if one is ready for exactly this confinement and these limits, else a new one."""
    with _lock:
        spare = _spares.pop((confinement, limits, module_file), None)
    if spare is not None:
        if spare.proc.poll() is None:
            return spare
        discard(spare)  # it died waiting (killed from outside): never hand that out
    return start(confinement, limits, module_file)


def replenish(confinement: Confinement, limits: Limits, module_file: str) -> None:
    """Have a spare ready for the next attempt like this one."""
    global _registered
    key = (confinement, limits, module_file)
    # Without a uid of its own a candidate could tamper with a spare of its own uid (and so
    # with the next attempt): such sandboxes start cold, after the last one is swept.
    if not PRESTART or not confinement.dedicated_uid or key in _spares:
        return
    try:
        spare = start(confinement, limits, module_file)
    except SandboxError:
        return  # the next attempt will start one itself, and report the failure
    with _lock:
        extras = [_spares.pop(key)] if key in _spares else []
        while len(_spares) >= MAX_SPARES:
            extras.append(_spares.pop(next(iter(_spares))))
        _spares[key] = spare
        if not _registered:
            atexit.register(discard_all)
            _registered = True
    for extra in extras:
        discard(extra)


def discard(proc: CandidateProcess) -> None:
    with contextlib.suppress(SandboxError):
        proc.stop()
    proc.box.remove()


def discard_all() -> None:
    """Stop every spare (at exit; bubblewrap would also take them down with BenchRig)."""
    with _lock:
        spares = list(_spares.values())
        _spares.clear()
    for proc in spares:
        discard(proc)


@contextlib.contextmanager
def cold() -> Iterator[None]:
    """Within: every candidate process starts cold, and existing spares wait untouched."""
    global PRESTART
    with _lock:
        kept = dict(_spares)
        _spares.clear()
    before, PRESTART = PRESTART, False
    try:
        yield
    finally:
        PRESTART = before
        with _lock:
            kept.update(_spares)
            _spares.clear()
            _spares.update(kept)
