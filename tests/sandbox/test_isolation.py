"""How the sandbox is confined: detection, the bubblewrap command line, sweeps, cleanup."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from benchrig import trusted
from benchrig.sandbox import confinement
from benchrig.sandbox.confinement import Confinement
from tests.conftest import SOLUTIONS, TASKS
from tests.helpers.processes import start_hidden

ROOT_USER = os.geteuid() == 0


def test_the_sandbox_gets_every_namespace_and_sees_only_usr() -> None:
    conf = Confinement(interpreter="/usr/bin/python3", namespaces=True, dedicated_uid=True,
                       bwrap="/usr/bin/bwrap", setpriv="/usr/bin/setpriv")
    start = confinement.launch(conf, 1_900_000_123, None, 8, ["-I", "-c", "x"])
    argv = start.argv
    assert argv[:6] == ["/usr/bin/setpriv", "--reuid=1900000123", "--regid=1900000123",
                        "--clear-groups", "--no-new-privs", "--"]
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                 "--unshare-uts", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in argv
    binds = [argv[i + 1:i + 3] for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")]
    host_paths = {src for src, _ in binds}
    assert "--bind" not in argv  # nothing of the host is writable
    assert host_paths <= {"/usr"} | {  # nothing of the host but the system
        f"/{d}" for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")}
    assert argv[argv.index("--remount-ro") + 1] in ("/dev", "/")
    assert argv[-3:] == ["/usr/bin/python3", "-I", "-c", "x"][-3:]
    assert start.env == {} and start.cwd == "/"
    sizes = [argv[i + 1] for i, a in enumerate(argv) if a == "--size"]
    assert sizes and all(int(s) <= 8 * 1024 * 1024 for s in sizes)  # every tmpfs is capped


def test_without_namespaces_the_environment_is_still_cleared(tmp_path: Path) -> None:
    conf = Confinement(interpreter="/usr/bin/python3", namespaces=False, dedicated_uid=False)
    start = confinement.launch(conf, None, tmp_path, 8, ["-I"])
    assert start.argv == ["/usr/bin/python3", "-I"]
    assert set(start.env) == {"PATH", "HOME", "LANG"} and start.cwd == str(tmp_path)
    assert conf.level == confinement.DEGRADED and conf.keeper


@pytest.mark.parametrize(("uid_map", "inside"), [
    ("         0          0 4294967295\n", confinement.UID_BLOCK),
    ("         0     100000      65536\n", (32768, 32766)),
])
def test_the_uid_block_fits_what_this_root_may_use(uid_map: str, inside: tuple[int, int]
                                                   ) -> None:
    assert confinement.uid_block(uid_map) == inside
    base, size = inside
    assert 65534 not in range(base, base + size)


def test_detect_says_why_it_is_not_full(monkeypatch: pytest.MonkeyPatch) -> None:
    found = trusted.program
    monkeypatch.setattr(trusted, "program", lambda name: None if name == "bwrap" else found(name))
    monkeypatch.setattr(confinement.os, "geteuid", lambda: 1000)
    conf = confinement.detect.__wrapped__()
    assert conf.level == confinement.DEGRADED
    assert not conf.namespaces and not conf.dedicated_uid and conf.keeper
    note = confinement.warning(conf)
    assert note is not None
    assert "not running as root" in note and "bubblewrap is not installed" in note
    assert "docs/security.md" in note


def test_full_isolation_has_no_warning() -> None:
    conf = Confinement(interpreter="/usr/bin/python3", namespaces=True, dedicated_uid=True)
    assert conf.level == confinement.FULL and confinement.warning(conf) is None


def test_removing_a_folder_never_touches_what_is_around_it(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir(mode=0o755)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    folder = parent / "sandbox"
    folder.mkdir()
    (folder / "link").symlink_to(outside)
    (folder / "sub").mkdir()
    (folder / "sub" / "link").symlink_to(outside / "keep.txt")
    confinement.remove_folder(folder)
    assert not folder.exists() and (outside / "keep.txt").read_text() == "keep"
    confinement.remove_folder(folder)  # already gone: nothing happens, above all to `parent`
    folder.symlink_to(outside)  # swapped for a link by its owner
    confinement.remove_folder(folder)
    assert (outside / "keep.txt").exists()
    assert parent.stat().st_mode & 0o777 == 0o755


@pytest.mark.skipif(not ROOT_USER, reason="needs root to own files as another uid")
def test_sweeping_files_removes_only_that_uids_leftovers(tmp_path: Path) -> None:
    uid = confinement.allocate_uid(replace(confinement.detect(), dedicated_uid=True))
    assert uid is not None
    theirs = Path("/tmp") / f"benchrig-test-leftover-{uid}"
    theirs.mkdir()
    (theirs / "x").write_text("x")
    os.chown(theirs, uid, uid)
    ours = Path("/tmp") / f"benchrig-test-ours-{uid}"
    ours.write_text("ours")
    try:
        assert confinement.sweep_files(uid) == [str(theirs)]
        assert not theirs.exists() and ours.exists()
    finally:
        ours.unlink()
        shutil.rmtree(theirs, ignore_errors=True)


@pytest.mark.skipif(not ROOT_USER or not shutil.which("setpriv"),
                    reason="needs root to start a process as another uid")
def test_the_uid_sweep_kills_what_hides_and_proves_none_is_left() -> None:
    uid = confinement.allocate_uid(replace(confinement.detect(), dedicated_uid=True))
    assert uid is not None
    start_hidden(uid)  # setsid'd, ignoring signals, non-dumpable, orphaned at once
    assert uid in confinement.live_processes().values()
    assert confinement.sweep_uid(uid) >= 1
    assert uid not in confinement.live_processes().values()


@pytest.mark.skipif(not ROOT_USER or not shutil.which("setpriv"),
                    reason="needs root to start a process as another uid")
def test_killing_as_the_uid_takes_all_its_processes_at_once() -> None:
    uid = confinement.allocate_uid(replace(confinement.detect(), dedicated_uid=True))
    assert uid is not None
    started = [subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}",
                                 "--clear-groups", "/usr/bin/sleep", "600"],
                                start_new_session=True) for _ in range(3)]
    try:
        for _ in range(500):  # until all three have switched to the uid
            if list(confinement.live_processes().values()).count(uid) == 3:
                break
            time.sleep(0.01)
        assert list(confinement.live_processes().values()).count(uid) == 3
        confinement.kill_as(uid)
        assert all(p.wait(timeout=10) == -9 for p in started)
        assert uid not in confinement.live_processes().values()
    finally:
        confinement.sweep_uid(uid)


def test_limits_the_kernel_refuses_make_the_isolation_none(tmp_path: Path) -> None:
    from benchrig.checks.coding import run_tests
    from benchrig.sandbox import Limits, SandboxPool
    from benchrig.spec import load_task

    task = load_task(TASKS / "lru-cache.md")
    good = (SOLUTIONS / "lru-cache.py").read_text()
    with SandboxPool(limits=Limits(open_files=10**12), prestart=False) as pool:  # > nr_open
        report = run_tests(task, good, pool)
    assert report.isolation == "none"
    assert report.sandbox["limits_failed"] == ["open_files"]


def test_a_sandbox_not_confined_as_claimed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchrig.core.errors import SandboxError
    from benchrig.sandbox.process import Box, CandidateProcess, Limits

    conf = confinement.detect()
    box = Box.create(conf, "solution.py")
    if box.uid is None:
        pytest.skip("no dedicated uid here")
    other = box.uid + 1
    real_launch = confinement.launch
    monkeypatch.setattr(confinement, "launch", lambda c, uid, *rest: real_launch(c, other, *rest))
    proc = CandidateProcess(box, Limits())  # recorded as box.uid, started as `other`
    try:
        with pytest.raises(SandboxError, match="not its own uid"):
            proc.ready()
    finally:
        proc.stop()
        box.remove()
        confinement.sweep_uid(other)
