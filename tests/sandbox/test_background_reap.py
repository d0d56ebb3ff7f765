"""Reaping off the attempt's path: a sandbox is killed when its verdict is in and reaped and
swept by the pool in the background; what it left running is still killed, cannot reach the
next attempt, and a sweep that fails still stops the run (issue 27)."""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import replace
from pathlib import Path

import pytest

from benchrig import sandbox
from benchrig.checks.coding import REAPED_LATER, run_tests
from benchrig.core.errors import SandboxError
from benchrig.core.task import TaskSpec
from benchrig.sandbox import Limits, SandboxPool, confinement
from benchrig.sandbox.confinement import live_processes
from benchrig.sandbox.pool import start
from benchrig.spec import load_task

LIMITS = Limits(cpu_s=5, address_space_mb=512, processes=24, scratch_mb=4)
full = pytest.mark.skipif(sandbox.detect().level != sandbox.FULL,
                          reason="only a final kill (pid namespace, own uid) is reaped later")
TESTS = "from solution import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"

# Attempt 1 leaves a detached daemon (setsid, double fork) that listens on a loopback port,
# plants a file in /tmp and forks and exits in a loop: a moving target still alive when the
# verdict is in, since the pool reaps it later.
LINGERER = """
import os, socket, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", __PORT__))
        server.listen()
        open("/tmp/__TOKEN__", "w").write("planted")
        while True:
            if os.fork():
                os._exit(0)
            os.setsid()
            time.sleep(0.001)
    os._exit(0)
os.wait()
time.sleep(0.2)  # the daemon is up before the verdict
def add(a, b):
    return a + b
"""
# Attempt 2 passes only if nothing of attempt 1 reaches it: no file, no port, no process.
ALONE = """
import os, socket
def _alone():
    if os.path.exists("/tmp/__TOKEN__") or os.listdir("/tmp"):
        return False
    if {int(p) for p in os.listdir("/proc") if p.isdigit()} - {1, 2, 3, os.getpid()}:
        return False
    try:
        socket.create_connection(("127.0.0.1", __PORT__), timeout=0.5).close()
    except OSError:
        return True
    return False
def add(a, b):
    return a + b if _alone() else 0
"""


def task_in(tmp_path: Path) -> TaskSpec:
    (tmp_path / "reap.md").write_text(
        "---\nid: reap\nsuite: coding\nlanguage: python\ndifficulty: easy\ntags: [t]\n"
        "timeout_s: 60\ncheck_timeout_s: 5\nentry_point: add\n---\n\n# add\n")
    (tmp_path / "reap.test.py").write_text(TESTS)
    return load_task(tmp_path / "reap.md")


def fill(code: str, token: str, port: int) -> str:
    return code.replace("__TOKEN__", token).replace("__PORT__", str(port))


def survivors(uids: list[int], token: str) -> list[int]:
    alive = [pid for pid, owner in live_processes().items() if owner in uids]
    for pid in Path("/proc").iterdir():
        try:
            if token.encode() in (pid / "cmdline").read_bytes():
                alive.append(int(pid.name))
        except (OSError, ValueError):
            continue
    return alive


@full
def test_a_lingering_forking_child_is_killed_and_never_reaches_the_next_attempt(
        tmp_path: Path) -> None:
    task = task_in(tmp_path)
    token = f"LINGER{secrets.token_hex(6)}"
    port = 20000 + secrets.randbelow(20000)
    with SandboxPool(sandbox.detect(), LIMITS) as pool:
        first = run_tests(task, fill(LINGERER, token, port), pool)
        assert first.all_passed, first.details
        assert first.sandbox["cleanup"] == REAPED_LATER  # the verdict did not wait for it
        second = run_tests(task, fill(ALONE, token, port), pool)
        assert second.all_passed, second.details  # nothing of attempt 1 reached it
        pool.settle()
        uids = [u for u in first.sandbox["uids"] + second.sandbox["uids"] if u is not None]
        assert survivors(uids, token) == []


@full
def test_a_sweep_that_fails_in_the_background_stops_the_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = task_in(tmp_path)

    def cannot(uids: object, timeout_s: float = 0.0, walk: object = None) -> int:
        raise SandboxError(f"processes of sandbox uid {uids} survived SIGKILL: [1]")

    pool = SandboxPool(sandbox.detect(), LIMITS)
    try:
        monkeypatch.setattr(confinement, "sweep_uids", cannot)  # every sweep goes through it
        report = run_tests(task, "def add(a, b):\n    return a + b\n", pool)
        assert report.all_passed  # the verdict was in before the sweep
        with pytest.raises(SandboxError, match="could not be verified"):
            pool.settle()
        with pytest.raises(SandboxError, match="could not be verified"):
            pool.take(sandbox.MODULE_FILE)  # no candidate runs after an unproven sweep
        monkeypatch.undo()
    finally:
        with pytest.raises(SandboxError, match="could not be verified"):
            pool.close()


def test_a_sandbox_stopped_twice_closes_no_fd_twice() -> None:
    """A sandbox refused at its hello is stopped there, then released by its runner (now on
    the reaper thread): a second close of its fd numbers closed whatever another thread had
    opened under them meanwhile (seen: the pool's own walk of /proc failed with EBADF)."""
    broken = replace(sandbox.detect(), interpreter="/nonexistent/python3")
    proc = start(broken, LIMITS, sandbox.MODULE_FILE)
    with pytest.raises(SandboxError):
        proc.ready()  # refused: stopped and reaped here
    others = [os.open("/dev/null", os.O_RDONLY) for _ in range(8)]  # reuse the numbers
    try:
        proc.stop()
        proc.box.remove()
        for fd in others:
            os.fstat(fd)  # EBADF if the second stop closed it
    finally:
        for fd in others:
            with contextlib.suppress(OSError):
                os.close(fd)


@full
def test_a_sandbox_swept_at_its_hello_is_not_swept_again_when_released(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused at its hello, a sandbox is stopped and swept there; released by its runner
    after, its uid — proven gone, so free to be handed out again — must not be swept a
    second time: that sweep would kill the uid's next holder."""
    broken = replace(sandbox.detect(), interpreter="/nonexistent/python3")
    swept: list[int] = []
    with SandboxPool(broken, LIMITS, prestart=False) as pool:
        real = pool.census.sweep

        def recorded(*uids: int, timeout_s: float = confinement.SWEEP_TIMEOUT_S) -> int:
            swept.extend(uids)
            return real(*uids, timeout_s=timeout_s)

        monkeypatch.setattr(pool.census, "sweep", recorded)
        proc = start(broken, LIMITS, sandbox.MODULE_FILE, pool.census)
        with pytest.raises(SandboxError):
            proc.ready()  # refused: stopped, reaped and swept here
        assert proc.swept and swept == [proc.box.uid]
        pool.release(proc)
        pool.settle()
    assert swept == [proc.box.uid]
