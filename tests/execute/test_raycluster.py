"""`benchrig run --executor ray` on a real local Ray cluster (a head and two worker nodes,
each advertising runtimes and models as custom resources): the same results as the local
executor, each naming its node; in-process attempts one at a time per worker, the model
loaded once per worker; a worker killed mid-attempt an infra error that a resume re-runs;
no Ray process left behind."""

from __future__ import annotations

import importlib.util
import itertools
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from benchrig.local.embedded_server import free_port
from benchrig.resultio.files import load_results
from tests.conftest import ROOT, SOLUTIONS, Ran, answer_file, benchrig, fenced
from tests.helpers.paced import paced

if TYPE_CHECKING:
    from ray.cluster_utils import Cluster

# Ray is imported by the fixture that starts the cluster, not at collection: the fast lane
# collects this module too, and leaves it out only after (importing Ray costs ~0.5 s of CPU).
pytestmark = [pytest.mark.slow, pytest.mark.ray,
              pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                 reason="Ray is not installed: pip install '.[ray]' "
                                        "(make test installs it)")]

# What each worker node serves: two replay attempts at once, one embedded model, one
# attempt against the paced server.
SERVES = {"runtime:replay": 2, "runtime:llamacpp": 1, "runtime:openai": 1,
          "model:a": 1, "model:b": 1, "model:smollm2": 1, "model:paced": 1}
MARK = "BENCHRIG_RAY_TEST_MARK"  # set in every process the tests start, so they can be found


def marked(mark: str) -> list[int]:
    """The live processes whose environment carries `mark` (started by these tests)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def left_after(mark: str, wait_s: float = 20) -> list[int]:
    deadline = time.monotonic() + wait_s
    while (alive := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head (no resources: it only coordinates) and two worker nodes serving SERVES;
    stopped at the end, and every process it started checked gone."""
    from ray.cluster_utils import Cluster

    mark = uuid.uuid4().hex
    os.environ[MARK] = mark
    started = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        for _ in range(2):
            started.add_node(num_cpus=1, resources=SERVES)
        started.wait_for_nodes()
        yield started
    finally:
        started.shutdown()
        del os.environ[MARK]
    assert left_after(mark) == [], "Ray processes left after the cluster was shut down"


def worker_nodes(cluster: Cluster) -> set[str]:
    return {node.node_id for node in cluster.worker_nodes}


def run(*args: str, results_dir: Path, cluster: Cluster | None = None) -> Ran:
    where = ["--executor", "ray", "--ray-address", cluster.address] if cluster else []
    return benchrig("run", *args, *where, results_dir=results_dir, timeout=300)


def outcomes(results_dir: Path) -> set[tuple[Any, ...]]:
    """What must not depend on the executor: task, hash, model, run, verdict, checks."""
    return {(r["task"], r["task_hash"], r["model"], r["run_index"], r["result"],
             r["checks"]["passed"], r["checks"]["total"])
            for r in load_results([results_dir]).results}


def test_the_replay_matrix_gives_the_local_results_and_names_its_nodes(
        cluster: Cluster, tmp_path: Path) -> None:
    answer = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    args = ("lru-cache", "bat-and-ball", "-d", "replay", "-p", str(answer), "-m", "a", "-m", "b",
            "--runs", "2", "-j", "4")
    local, ray = tmp_path / "local", tmp_path / "ray"
    assert run(*args, results_dir=local).code == 1  # bat-and-ball fails on this answer
    ran = run(*args, results_dir=ray, cluster=cluster)
    assert ran.code == 1, ran.stderr
    assert outcomes(ray) == outcomes(local) and len(outcomes(local)) == 8
    results = load_results([ray]).results
    nodes = {r["environment"]["node"]["node_id"] for r in results}
    # four workers at once, two runtime:replay per node: both nodes ran attempts
    assert nodes == worker_nodes(cluster)
    assert {r["environment"]["node"]["host"] for r in results} == {socket.gethostname()}
    assert all("node" not in r["environment"] for r in load_results([local]).results)


@pytest.mark.model
def test_the_embedded_model_runs_one_attempt_at_a_time_per_worker_loaded_once(
        cluster: Cluster, tmp_path: Path) -> None:
    args = ("bat-and-ball", "two-trains", "-d", "llamacpp", "-m", "smollm2", "--runs", "2",
            "--max-tokens", "24", "--threads", "1", "-j", "2")
    local, ray = tmp_path / "local", tmp_path / "ray"
    run(*args, results_dir=local)
    ran = run(*args, results_dir=ray, cluster=cluster)
    assert ran.code in (0, 1), ran.stderr
    assert outcomes(ray) == outcomes(local) and len(outcomes(local)) == 4
    by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in load_results([ray]).results:
        by_node[r["environment"]["node"]["node_id"]].append(r)
    assert set(by_node) <= worker_nodes(cluster)
    for results in by_node.values():
        spans = sorted((r["started_at"], r["ended_at"]) for r in results)
        assert all(ended <= started
                   for (_, ended), (started, _) in itertools.pairwise(spans)), spans
        loads = [r for r in results if r["metrics"]["load_time_s"] is not None]
        assert len(loads) == 1, "the model is loaded once per worker"


@pytest.fixture
def slow_server() -> Iterator[str]:
    """bench/paced_server.py answering each request 3 s after it arrives."""
    with paced(3.0) as url:
        yield url


def attempting_workers(mark: str) -> list[int]:
    """The Ray worker processes of these tests running an attempt now."""
    busy = []
    for pid in marked(mark):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::AttemptWorker.attempt"):
            busy.append(pid)
    return busy


def started_on_the_cluster(cluster: Cluster, server: str, results_dir: Path, runs: int
                           ) -> tuple[subprocess.Popen[str], list[int]]:
    """`benchrig run` of bat-and-ball against `server` on the cluster, returned once one of
    its workers is attempting (with the pids of those that are)."""
    args = ["run", "bat-and-ball", "-d", "openai", "-p", server, "-m", "paced",
            "--runs", str(runs), "-j", "2", "--executor", "ray", "--ray-address",
            cluster.address]
    env = {**os.environ, "BENCHRIG_RESULTS_DIR": str(results_dir)}
    cli = subprocess.Popen([sys.executable, "-m", "benchrig.cli", *args], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (busy := attempting_workers(os.environ[MARK])):
        if time.monotonic() >= deadline or cli.poll() is not None:
            cli.kill()
            raise AssertionError("no attempt started")
        time.sleep(0.1)
    return cli, busy


def test_a_worker_killed_mid_attempt_is_an_infra_error_and_resume_completes(
        cluster: Cluster, slow_server: str, tmp_path: Path) -> None:
    results_dir = tmp_path / "results"
    cli, busy = started_on_the_cluster(cluster, slow_server, results_dir, runs=4)
    try:
        os.kill(busy[0], signal.SIGKILL)  # a worker process of this test's cluster
        _, err = cli.communicate(timeout=240)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 1, err
    results = load_results([results_dir]).results
    assert len(results) == 4
    lost = [r for r in results if r["result"] == "error"]
    assert len(lost) == 1, [r["notes"] for r in results]
    assert lost[0]["error"]["kind"] == "infra" and "lost mid-attempt" in lost[0]["notes"]
    assert lost[0]["environment"]["node"]["node_id"] in worker_nodes(cluster)
    assert {r["result"] for r in results} - {"error"} == {"fail"}  # the paced answer fails

    again = run("bat-and-ball", "-d", "openai", "-p", slow_server, "-m", "paced", "--runs",
                "4", "-j", "2", "--resume", "--retry-errors", results_dir=results_dir,
                cluster=cluster)
    assert again.code == 1, again.stderr  # failing verdicts, no error
    assert "1 to run" in again.stderr
    latest: dict[int, dict[str, Any]] = {}
    for r in sorted(load_results([results_dir]).results, key=lambda r: r["started_at"]):
        latest[r["run_index"]] = r
    assert sorted(latest) == [0, 1, 2, 3]
    assert {r["result"] for r in latest.values()} == {"fail"}


def test_ctrl_c_stops_what_is_in_flight_and_writes_nothing(
        cluster: Cluster, slow_server: str, tmp_path: Path) -> None:
    results_dir = tmp_path / "results"
    cli, busy = started_on_the_cluster(cluster, slow_server, results_dir, runs=2)
    try:
        cli.send_signal(signal.SIGINT)
        _, err = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 130, err
    assert "interrupted after 0/2" in err
    assert sorted(p.name for p in results_dir.iterdir()) == [".benchrig.lock"]
    deadline = time.monotonic() + 20
    while any(Path(f"/proc/{pid}").exists() for pid in busy) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in busy if pid in attempting_workers(os.environ[MARK])], \
        "an interrupted attempt still runs on its worker"


def test_a_run_that_starts_ray_itself_leaves_no_ray_process(tmp_path: Path) -> None:
    """Without --ray-address the run starts a local Ray advertising what its plan needs,
    and stops it when it ends."""
    mark = uuid.uuid4().hex
    answer = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    home = tmp_path / "home"
    home.mkdir()
    ran = benchrig("run", "lru-cache", "-d", "replay", "-p", str(answer), "-m", "a",
                   "--executor", "ray", results_dir=tmp_path / "results",
                   env={MARK: mark, "RAY_ADDRESS": "", "HOME": str(home)}, timeout=300)
    assert ran.code == 0, ran.stderr
    # its own token, in no file of the user's an agent could read (Ray's default:
    # ~/.ray/auth_token), and its own session folder, removed at the end
    assert not (home / ".ray").exists()
    assert "Token authentication is enabled" not in ran.stderr
    (result,) = load_results([tmp_path / "results"]).results
    assert result["result"] == "pass" and result["environment"]["node"]["node_id"]
    assert left_after(mark) == [], "the run left Ray processes behind"


def test_an_attempt_no_node_serves_is_refused_before_anything_runs(
        cluster: Cluster, tmp_path: Path) -> None:
    answer = answer_file(tmp_path, "x")
    ran = run("lru-cache", "-d", "replay", "-p", str(answer), "-m", "unserved",
              results_dir=tmp_path / "results", cluster=cluster)
    assert ran.code == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert "no live node of the Ray cluster advertises both runtime:replay and " \
           "model:unserved" in ran.stderr
    assert load_results([tmp_path / "results"]).results == []


def test_an_address_where_nothing_listens_is_refused_at_once(tmp_path: Path) -> None:
    began = time.monotonic()
    ran = benchrig("run", "lru-cache", "-d", "replay", "-p", str(answer_file(tmp_path, "x")),
                   "-m", "a", "--executor", "ray", "--ray-address", f"127.0.0.1:{free_port()}",
                   results_dir=tmp_path / "results", timeout=120)
    assert ran.code == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert "cannot join the Ray cluster at 127.0.0.1:" in ran.stderr
    assert time.monotonic() - began < 30  # Ray alone retries for minutes
