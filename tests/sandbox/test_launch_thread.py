"""A sandbox outlives the thread that asked for it: bubblewrap's --die-with-parent follows
the thread that forked it, so every launch happens on the pool's one long-lived launcher.

The flake it explains (issue 27): `verify` ran an attempt's check on a short-lived
`benchrig-check` thread (checks.guard.within_deadline); the check's final `replenish`
launched the next spare there, the thread ended, the kernel SIGKILLed that spare, and the
attempt that took it before it died got "the sandbox did not start: candidate process was
killed by SIGKILL" (error/harness).
"""

from __future__ import annotations

import subprocess
import threading

import pytest

from benchrig import sandbox
from benchrig.sandbox import MODULE_FILE, Limits, SandboxPool
from benchrig.sandbox.pool import start

LIMITS = Limits(cpu_s=5, address_space_mb=512, processes=24, scratch_mb=4)
needs_bwrap = pytest.mark.skipif(not sandbox.detect().namespaces,
                                 reason="--die-with-parent is bubblewrap's")


def usable(proc: sandbox.CandidateProcess) -> None:
    """Fails unless the sandbox lives on (the kernel's parent-death signal comes as the
    asking thread's OS thread ends, a moment after join()), says hello and imports code."""
    with pytest.raises(subprocess.TimeoutExpired):
        proc.proc.wait(timeout=1.0)
    proc.ready()
    reply = proc.request({"op": "import", "source": "def add(a, b):\n    return a + b\n"}, 10)
    assert reply.get("ok") is True, reply


@needs_bwrap
def test_a_spare_launched_for_a_thread_that_ends_still_works() -> None:
    """As a check's thread did: launch the next spare, go on a little (here: until the spare
    has said hello, so bubblewrap has armed --die-with-parent), end."""
    with SandboxPool(sandbox.detect(), LIMITS) as pool:
        def check_thread() -> None:
            pool.replenish(MODULE_FILE)
            for spare in pool.spares():
                spare.ready()

        asker = threading.Thread(target=check_thread, name="benchrig-check")
        asker.start()
        asker.join()
        spares = pool.spares()
        assert spares
        for spare in spares:
            usable(spare)


@needs_bwrap
def test_a_cold_start_on_a_thread_that_ends_still_works() -> None:
    made: list[sandbox.CandidateProcess] = []

    def check_thread() -> None:
        made.append(start(sandbox.detect(), LIMITS, MODULE_FILE))
        made[0].ready()

    asker = threading.Thread(target=check_thread, name="benchrig-check")
    asker.start()
    asker.join()
    try:
        usable(made[0])
    finally:
        made[0].stop()
        made[0].box.remove()
