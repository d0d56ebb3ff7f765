"""What a confined agent cannot reach beside BenchRig itself: another attempt's workspace and
home (attempts run at once under --jobs), what anyone left in the host's /tmp and /var/tmp,
Ray's token and session folders, a task file's real folder behind a symbolic link, results
folders other than the run's own; and on a host that runs a Ray node, no agent runs at all."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchrig import trusted
from benchrig.drivers import agent, confine, get_driver
from benchrig.drivers.agent_process import Workspace
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS
from tests.drivers.test_agent_confinement import snoop
from tests.helpers.agents import (
    fixture_log,
    needs_bwrap,
    sidecar_of,
    use_fixture,
    use_probing_claude,
)


@pytest.fixture
def victim() -> Iterator[tuple[Path, Path]]:
    """Another attempt of this process, running at once: its workspace holding its solution,
    and its private home holding pi's models.json."""
    with Workspace() as workspace:
        # beside it, where this process makes every agent's home
        home = Path(tempfile.mkdtemp(prefix="benchrig-agent-home-", dir=workspace.path.parent))
        try:
            (workspace.path / "solution.py").write_text("VICTIM = 'right'\n")
            (home / ".pi" / "agent").mkdir(parents=True)
            (home / ".pi" / "agent" / "models.json").write_text('{"providers": {}}')
            yield workspace.path, home
        finally:
            shutil.rmtree(home)


@pytest.mark.slow
@needs_bwrap
def test_concurrent_agents_never_share_a_writable_folder(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, victim: tuple[Path, Path]) -> None:
    workspace, home = victim
    token = secrets.token_hex(4)
    left = [Path(folder) / f"benchrig-left-{token}" for folder in ("/tmp", "/var/tmp")]
    for path in left:  # what another attempt (or anyone) left in the shared folders
        path.write_text("left for the next agent")
    solution, models = workspace / "solution.py", home / ".pi" / "agent" / "models.json"
    plan = {"read": [str(solution), str(models), *map(str, left)],
            "rewrite": [str(solution), str(models)],
            "write": [str(workspace / "planted.py"), f"/tmp/planted-{token}",
                      f"/var/tmp/planted-{token}"],
            "list": [str(workspace.parent), "/tmp", "/var/tmp"]}
    try:
        r, seen = snoop(monkeypatch, tmp_path, plan)
    finally:
        for path in left:
            path.unlink()
    assert r["result"] == "pass"
    assert solution.read_text() == "VICTIM = 'right'\n" and models.read_text() == (
        '{"providers": {}}')
    assert not (workspace / "planted.py").exists()
    assert all(seen["read"][p].startswith("FileNotFoundError") for p in plan["read"]), seen
    assert all(not outcome.startswith("ok") for outcome in seen["rewrite"].values()), seen
    assert seen["write"].pop(str(workspace / "planted.py")) != "ok"
    # its own /tmp and /var/tmp take what it writes, and nothing of it reaches the host's
    assert set(seen["write"].values()) == {"ok"}
    assert not any(Path(p).exists() for p in seen["write"])
    listed = seen["list"][str(workspace.parent)]
    assert workspace.name not in listed and home.name not in listed
    assert len(listed) == 2  # only its own workspace and home are bound in
    assert not any(f"benchrig-left-{token}" in entries for entries in seen["list"].values())
    record = r["settings"]["agent_confinement"]
    assert record["private"] == ["/tmp", "/var/tmp"] and "/tmp" not in record["writable"]


@needs_bwrap
def test_rays_token_and_session_folder_are_hidden(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text("cluster-token")
    session = Path(tempfile.mkdtemp(prefix="benchrig-test-ray-", dir=Path.home()))
    try:
        (session / "ports").write_text("6379")
        monkeypatch.setenv("RAY_TMPDIR", str(session))
        plan = {"read": [str(home / ".ray" / "auth_token"), str(session / "ports")]}
        r, seen = snoop(monkeypatch, tmp_path, plan)
    finally:
        shutil.rmtree(session)
    assert all(seen["read"][p].startswith("FileNotFoundError") for p in plan["read"]), seen
    assert os.path.realpath(session) in r["settings"]["agent_confinement"]["hidden"]


@needs_bwrap
def test_a_symlinked_task_hides_the_folder_it_really_lives_in(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real, linked = tmp_path / "real", tmp_path / "linked"
    real.mkdir()
    linked.mkdir()
    for name in ("lru-cache.md", "lru-cache.test.py"):
        shutil.copy(TASKS / name, real / name)
        (linked / name).symlink_to(real / name)
    plan = {"read": [str(real / "lru-cache.test.py")]}
    log = use_probing_claude(monkeypatch, tmp_path, plan)
    task = load_task(linked / "lru-cache.md")
    done = run_attempt(task, "sonnet", get_driver("claude"), None,
                       settings_for(task, Overrides()), tmp_path / "results", agent="claude")
    seen = next(e["probe"] for e in fixture_log(log, sidecar_of(done.path)) if "probe" in e)
    assert seen["read"][str(real / "lru-cache.test.py")].startswith("FileNotFoundError"), seen
    assert str(real) in done.result["settings"]["agent_confinement"]["hidden"]


@needs_bwrap
def test_results_folders_beside_the_runs_own_are_hidden(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """An earlier run's results (their transcripts hold other models' solutions) in the
    folder BENCHRIG_RESULTS_DIR names and in the current folder's results/."""
    earlier, here = tmp_path / "earlier-results", tmp_path / "cwd"
    for folder in (earlier, here / "results"):
        folder.mkdir(parents=True)
        (folder / "old.transcript.jsonl").write_text("another model's solution")
    monkeypatch.setenv("BENCHRIG_RESULTS_DIR", str(earlier))
    monkeypatch.chdir(here)
    plan = {"read": [str(earlier / "old.transcript.jsonl"),
                     str(here / "results" / "old.transcript.jsonl")]}
    _, seen = snoop(monkeypatch, tmp_path, plan)
    assert all(seen["read"][p].startswith("FileNotFoundError") for p in plan["read"]), seen


# A Ray node of the test's own, in a network namespace of its own (bubblewrap's --unshare-net):
# /proc/net/unix lists only its namespace's sockets, so a raylet bound on the host would make
# every agent attempt running beside the test refuse (another xdist worker, another checkout).
RAYLET = """
import json, socket, sys
from benchrig.drivers.confine import ray_node
raylet = socket.socket(socket.AF_UNIX)
raylet.bind(sys.argv[1])
raylet.listen()
print(json.dumps(ray_node()), flush=True)
sys.stdin.readline()
raylet.close()
print(json.dumps(ray_node()), flush=True)
"""


def _raylet_sockets() -> tuple[Path, Path]:
    """A folder to remove after, and a raylet's path in it, short enough for a socket."""
    short = Path(tempfile.mkdtemp(prefix="ray-"))  # a socket's path has at most 107 bytes
    sockets = short / "session_2026-12-01_00-00-00_000000_1" / "sockets"
    sockets.mkdir(parents=True)
    return short, sockets / "raylet"


@needs_bwrap
def test_a_ray_node_is_seen_by_its_raylet_socket_in_its_namespace_only() -> None:
    bwrap = trusted.program("bwrap")
    assert bwrap is not None
    short, raylet = _raylet_sockets()
    try:
        node = subprocess.Popen(
            [bwrap, "--unshare-net", "--dev-bind", "/", "/", "--chdir", str(ROOT),
             sys.executable, "-c", RAYLET, str(raylet)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert node.stdin is not None and node.stdout is not None
        seen = json.loads(node.stdout.readline())
        # while it listens: the test's own namespace, where every other attempt runs
        beside = Path(confine.UNIX_SOCKETS).read_text()
        out, _ = node.communicate("close\n", timeout=60)
    finally:
        shutil.rmtree(short)
    assert seen is not None and f"a Ray node runs on this host ({raylet})" in seen
    assert json.loads(out) is None  # gone with it
    assert str(raylet) not in beside


def test_no_agent_runs_on_a_host_that_runs_a_ray_node(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """A confined agent shares the host's network: with a Ray node here it could join the
    cluster and run a task outside its confinement. The attempt is refused, and says why.
    The node is a listing of the kernel's shape (the test above binds a real one)."""
    raylet = "/tmp/ray-x/session_2026-12-01_00-00-00_000000_1/sockets/raylet"
    listing = tmp_path / "unix"
    listing.write_text("Num       RefCount Protocol Flags    Type St Inode Path\n"
                       f"00000000b29e97e0: 00000002 00000000 00010000 0001 01 8118178 {raylet}\n")
    monkeypatch.setattr(agent, "ray_node", lambda: confine.ray_node(str(listing)))
    use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    task = load_task(TASKS / "lru-cache.md")
    r = run_attempt(task, "sonnet", get_driver("claude"), None,
                    settings_for(task, Overrides()), tmp_path / "results", agent="claude").result
    assert (r["result"], (r["error"] or {}).get("kind")) == ("error", "infra"), r
    assert f"a Ray node runs on this host ({raylet})" in r["error"]["message"]
