"""Agents are confined: a fixture agent that snoops from its workspace — the hidden tests by
absolute path, the checkout, .git, the results, BenchRig's source, an unmount of the tmpfs —
finds nothing and changes nothing, while its own work still passes. The same probe without
bubblewrap does find the tests: the probe can see a leak when there is one."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchrig import paths
from benchrig.core.errors import ResultError
from benchrig.drivers import confine, get_driver
from benchrig.drivers.confine import Plan, Support, checkouts
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT, WITHOUT_BUBBLEWRAP, benchrig
from tests.helpers.agents import (
    CONFINED,
    FIXTURES,
    fixture_log,
    needs_bwrap,
    sidecar_of,
    stream,
    task_with_timeout,
    use_fixture,
    use_probing_claude,
    use_scenario,
)
from tests.helpers.processes import host_processes, wait_dead

SECRET = ROOT / "tasks" / "lru-cache.test.py"


def snoop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
          plan: dict[str, list[str]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One claude-fixture attempt on lru-cache that probes first, then solves the task."""
    log = use_probing_claude(monkeypatch, tmp_path, plan)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    task = load_task(task_with_timeout(tmp_path, 60))  # a task folder outside the checkout
    done = run_attempt(task, "sonnet", get_driver("claude"), None,
                       settings_for(task, Overrides()), tmp_path / "results", agent="claude")
    entries = fixture_log(log, sidecar_of(done.path))
    return done.result, next(entry["probe"] for entry in entries if "probe" in entry)


def git_status() -> str | None:
    if shutil.which("git") is None:
        return None
    return subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=ROOT,
                          capture_output=True, text=True, check=False).stdout


@pytest.mark.slow
@needs_bwrap
def test_a_confined_agent_sees_nothing_of_benchrig_and_changes_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    token = secrets.token_hex(4)
    results, tasks = tmp_path / "results", tmp_path / "tasks"
    others = [p for p in checkouts(ROOT) if p != ROOT]  # .git and its other worktrees
    planted = [ROOT / f"planted-{token}.py", ROOT / "tasks" / f"planted-{token}.md",
               ROOT / "benchrig" / "checks" / f"planted-{token}.py", ROOT / ".git" / token,
               *(p / f"planted-{token}" for p in others)]
    plan = {
        "umount": [str(ROOT), str(ROOT / "tests" / "fixtures" / "agents"), str(tasks)],
        "umount_in_userns": [str(ROOT), str(tasks)],
        "write": [*map(str, planted), str(results / f"planted-{token}.json"),
                  str(tasks / f"planted-{token}.md"), f"/usr/planted-{token}",
                  f"planted-{token}.txt", str(tmp_path / "home" / f"planted-{token}"),
                  f"$HOME/planted-{token}"],
        "read": [str(SECRET), str(tasks / "lru-cache.test.py"),
                 str(ROOT / "benchrig" / "orchestrate" / "runner.py"), str(ROOT / ".git"),
                 f"/proc/{os.getpid()}/root{SECRET}",
                 *(str(p / "tasks" / "lru-cache.test.py") for p in others)],
        "list": [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fixtures"),
                 str(ROOT / "tasks"), str(results), str(tasks), *map(str, others)],
    }
    before = git_status()
    results.mkdir()
    try:
        r, seen = snoop(monkeypatch, tmp_path, plan)
        assert not [p for p in planted if p.exists()]  # nothing reached the checkout
    finally:
        for path in planted:
            with contextlib.suppress(OSError):  # e.g. .git is a file in a linked worktree
                path.unlink()
    assert git_status() == before

    assert all(outcome == "EPERM" for outcome in seen["umount"].values()), seen
    # in a user namespace of its own it has every capability, but the mounts it inherited
    # are locked (or, where the kernel refuses it that namespace, it never gets there)
    assert all(outcome == "EINVAL" or outcome.startswith("unshare: ")
               for outcome in seen["umount_in_userns"].values()), seen
    assert all(seen["read"][p].startswith(("FileNotFoundError", "PermissionError"))
               for p in plan["read"]), seen["read"]
    # the checkout is an empty skeleton holding only the fixture CLI's own folder
    assert seen["list"][str(ROOT)] == ["tests"] and seen["list"][str(ROOT / "tests")] == [
        "fixtures"] and seen["list"][str(ROOT / "tests" / "fixtures")] == ["agents"]
    for folder in (ROOT / "tasks", *others):
        assert seen["list"][str(folder)] in ([], "FileNotFoundError: ENOENT"), folder
    assert seen["list"][str(results)] == [] and seen["list"][str(tasks)] == []
    writes = seen["write"]
    assert writes.pop(f"planted-{token}.txt") == "ok"  # its workspace
    assert not (tmp_path / "home" / f"planted-{token}").exists()  # the host's home: read-only
    private = [p for p in writes if p.endswith(f"/planted-{token}") and "benchrig-agent-home-"
               in p]
    assert len(private) == 1 and writes.pop(private[0]) == "ok"  # its own, private home
    assert all(outcome.startswith(("OSError: EROFS", "FileNotFoundError", "PermissionError"))
               for outcome in writes.values()), writes
    assert not list(results.glob("planted-*")) and not list(tasks.glob("planted-*"))

    # its own work is unaffected, and the result says how it was confined
    assert r["result"] == "pass" and r["code_source"] == "file"
    record = r["settings"]["agent_confinement"]
    assert record["method"] == "bubblewrap" and record["reason"] is None
    assert {str(ROOT), os.path.realpath(results), os.path.realpath(tasks)} <= set(
        record["hidden"])
    assert str(ROOT / "tests" / "fixtures" / "agents") in record["read_only"]
    assert os.path.realpath(tmp_path / "home") in record["read_only"]
    assert record["bwrap"] == confine.detect().bwrap


def test_without_bubblewrap_the_same_probe_finds_the_tests(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    monkeypatch.setattr(confine, "detect", lambda: Support(None, "test: no bubblewrap"))
    plan = {"read": [str(SECRET)], "list": [str(ROOT)]}
    r, seen = snoop(monkeypatch, tmp_path, plan)
    assert "def test_" in seen["read"][str(SECRET)]  # what confinement keeps from the agent
    assert "tasks" in seen["list"][str(ROOT)]
    assert r["result"] == "pass"
    assert r["settings"]["agent_confinement"] == {
        "method": "none", "reason": "test: no bubblewrap", "bwrap": None, "hidden": [],
        "read_only": [], "writable": [], "home_files": []}
    r["settings"]["agent_confinement"]["method"] = "chroot"  # the schema knows the methods
    with pytest.raises(ResultError, match="agent_confinement"):
        validate(r)


@pytest.mark.slow
def test_without_bubblewrap_the_cli_warns_once_and_can_refuse(tmp_path: Path,
                                                              results_dir: Path) -> None:
    env = {"BENCHRIG_CLAUDE_BIN": str(FIXTURES / "claude"),
           "FAKE_AGENT_SCENARIO": str(FIXTURES / "streams" / "claude-is-error.jsonl")}
    ran = benchrig("run", "lru-cache", "-m", "sonnet", "-d", "claude", "--runs", "2",
                   results_dir=results_dir, env=env, command=WITHOUT_BUBBLEWRAP)
    assert ran.code == 1, ran.stderr  # the scenario is an agent error; it still ran
    assert ran.stderr.count("agents run unconfined: bubblewrap is not installed") == 1
    records = [json.loads(p.read_text())["settings"]["agent_confinement"]
               for p in sorted(results_dir.glob("*.json"))]
    assert len(records) == 2 and all(r["method"] == "none" for r in records)

    refused = tmp_path / "refused"
    ran = benchrig("run", "lru-cache", "-m", "sonnet", "-d", "claude", "--require-isolation",
                   results_dir=refused, env=env, command=WITHOUT_BUBBLEWRAP)
    assert ran.code == 2 and "--require-isolation: agents run unconfined" in ran.stderr
    assert not refused.exists() or not list(refused.iterdir())


@pytest.mark.parametrize("confined", [True, False])
def test_an_agent_killed_by_a_signal_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            confined: bool) -> None:
    if confined and not CONFINED:
        pytest.skip("agents cannot be confined here")
    if not confined:
        monkeypatch.setattr(confine, "detect", lambda: Support(None, "test: no bubblewrap"))
    use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    use_scenario(monkeypatch, '{"_fixture": "kill"}\n')
    task = load_task(ROOT / "tasks" / "lru-cache.md")
    r = run_attempt(task, "sonnet", get_driver("claude"), None, settings_for(task, Overrides()),
                    tmp_path / "results", agent="claude").result
    assert r["result"] == "error" and r["error"]["kind"] == "infra"
    # bubblewrap passes a signal on as exit code 128 + N; either way the message names it
    assert r["error"]["message"].startswith("claude was killed by SIGKILL"), r["error"]
    assert r["settings"]["agent_confinement"]["method"] == ("bubblewrap" if confined else "none")


@pytest.mark.slow
@pytest.mark.parametrize("confined", [True, False])
def test_a_daemon_the_agent_leaves_dies_with_it_only_when_confined(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, confined: bool) -> None:
    if confined and not CONFINED:
        pytest.skip("agents cannot be confined here")
    if not confined:
        monkeypatch.setattr(confine, "detect", lambda: Support(None, "test: no bubblewrap"))
    use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    marker = f"fake-agent-daemon-{secrets.token_hex(6)}"
    monkeypatch.setenv("FAKE_AGENT_MARKER", marker)
    use_scenario(monkeypatch, '{"_fixture": "daemon"}\n{"_fixture": "sleep", "s": 0.5}\n'
                 + stream("claude-success"))
    seen: set[int] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(host_processes(marker))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    task = load_task(ROOT / "tasks" / "lru-cache.md")
    try:
        r = run_attempt(task, "sonnet", get_driver("claude"), None,
                        settings_for(task, Overrides()), tmp_path / "results",
                        agent="claude").result
    finally:
        stop.set()
        watcher.join()
        survivors = sorted(pid for pid in seen if not wait_dead(pid))
        for pid in survivors:  # never leave it running, whatever the test decides
            os.kill(pid, signal.SIGKILL)
    assert r["result"] == "pass" and seen  # the daemon ran while the agent did
    # confined, it dies with the agent's pid namespace; unconfined, its own session escapes
    # the process group BenchRig kills (docs/agents.md says so)
    assert survivors == ([] if confined else sorted(seen))


def test_git_worktrees_are_hidden_with_their_repository(tmp_path: Path) -> None:
    main, linked = tmp_path / "main", tmp_path / "linked"
    (main / ".git" / "worktrees" / "linked").mkdir(parents=True)
    linked.mkdir()
    meta = main / ".git" / "worktrees" / "linked"
    (meta / "commondir").write_text("../..\n")
    (meta / "gitdir").write_text(f"{linked / '.git'}\n")
    (linked / ".git").write_text(f"gitdir: {meta}\n")
    assert checkouts(linked) == [linked, main / ".git", main, linked]
    assert checkouts(main) == [main, main / ".git", main, linked]
    assert checkouts(tmp_path / "plain") == [tmp_path / "plain"]


def test_mounts_put_what_is_shown_on_top_of_what_is_hidden(tmp_path: Path) -> None:
    plan = Plan(hidden=("/srv/checkout",), read_only=("/srv/checkout/.agents",),
                writable=("/tmp", "/tmp/ws", "/home/u"))
    assert plan.mounts() == [
        "--bind", "/tmp", "/tmp", "--bind", "/home/u", "/home/u",
        "--tmpfs", "/srv/checkout", "--bind", "/tmp/ws", "/tmp/ws",
        "--ro-bind", "/srv/checkout/.agents", "/srv/checkout/.agents",
        "--remount-ro", "/srv/checkout"]


def test_a_private_tmp_is_a_writable_tmpfs_with_only_the_attempts_own_folders_in_it() -> None:
    plan = Plan(hidden=("/tmp/benchrig-agents-x",), private=("/tmp", "/var/tmp"),
                writable=("/tmp/benchrig-agents-x/ws", "/tmp/benchrig-agents-x/home"))
    assert plan.mounts() == [
        "--tmpfs", "/tmp", "--tmpfs", "/tmp/benchrig-agents-x", "--tmpfs", "/var/tmp",
        "--bind", "/tmp/benchrig-agents-x/home", "/tmp/benchrig-agents-x/home",
        "--bind", "/tmp/benchrig-agents-x/ws", "/tmp/benchrig-agents-x/ws",
        "--remount-ro", "/tmp/benchrig-agents-x"]  # its own /tmp stays writable


def test_the_plan_hides_each_folder_once_and_shows_the_agent_install(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agent = ROOT / ".agents" / "node_modules" / ".bin" / "pi"
    home = tmp_path / "private-home"
    home.mkdir()
    plan = confine.plan(workspace=workspace, home=home, host={"HOME": str(tmp_path)},
                        agent_binary=str(agent), private=[ROOT / "tasks", tmp_path / "gone"])
    assert str(ROOT) in plan.hidden and str(ROOT / "tasks") not in plan.hidden  # inside ROOT
    assert all(not h.startswith(str(tmp_path)) for h in plan.hidden)  # "gone" does not exist
    assert os.path.realpath(paths.ROOT / ".agents") in plan.read_only or not agent.exists()
    assert {os.path.realpath(home), os.path.realpath(workspace)} <= set(plan.writable)
    assert "/tmp" in plan.private and "/tmp" not in plan.writable  # a tmpfs of its own
    assert str(tmp_path) in plan.read_only  # the host's home


AS_A_USER = r"""
import importlib.util, json, os, subprocess, sys, tempfile
from pathlib import Path
root = Path(sys.argv[1])
sys.path.insert(0, str(root))  # benchrig.paths; confine.py loaded alone (no third-party imports)
spec = importlib.util.spec_from_file_location("confine", root / "benchrig/drivers/confine.py")
confine = sys.modules["confine"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(confine)
support = confine.detect()
out = {"available": support.available, "reason": support.reason}
if support.available:
    workspace, home = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    script = (f"cat {root}/tasks/lru-cache.test.py; echo read=$?; echo list=$(ls -A {root}); "
              f"umount -l {root}; echo umount=$?; touch {root}/planted-{sys.argv[2]}; "
              f"echo write=$?; touch {home}/mine && echo home=ok")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    wrapped = confine.confine(["/bin/sh", "-c", script], workspace=workspace, home=home)
    done = subprocess.run(wrapped.argv, cwd=workspace, env=env, capture_output=True, text=True)
    out.update(stdout=done.stdout, record=wrapped.record)
print(json.dumps(out))
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to act as an unprivileged user")
def test_a_laptop_user_confines_an_agent_the_same_way() -> None:
    """Without root, bubblewrap makes the user namespace itself; the checkout stays hidden."""
    token = secrets.token_hex(4)
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           "/usr/bin/python3", "-I", "-B", "-c", AS_A_USER, str(ROOT), token],
                          capture_output=True, text=True, timeout=120, check=False, cwd="/",
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    if not out["available"]:
        pytest.skip(f"bubblewrap does not work without root here: {out['reason']}")
    lines = out["stdout"].splitlines()
    assert "read=1" in lines and "list=" in lines  # nothing to read, nothing listed
    assert "umount=0" not in lines and "write=0" not in lines and "home=ok" in lines
    assert not (ROOT / f"planted-{token}").exists()
    assert out["record"]["method"] == "bubblewrap" and str(ROOT) in out["record"]["hidden"]
