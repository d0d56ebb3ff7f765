"""`benchrig run --jobs N` end to end against a paced server: faster with the same results,
timed suites alone, the embedded model one attempt at a time; killed and resumed, exactly
one result per (model, task, run)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, benchrig
from tests.helpers.paced import paced

pytestmark = pytest.mark.slow

REASONING = ("bat-and-ball", "chained-percentages", "discount-tax", "distinct-digit-fives",
             "knights-knaves", "letter-count-berries", "linear-recurrence", "two-trains")


def results(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def span(result: dict[str, Any]) -> tuple[float, float]:
    def at(text: str) -> float:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()

    return at(result["started_at"]), at(result["ended_at"])


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def attempt(result: dict[str, Any]) -> tuple[str, str, int]:
    return result["model"], result["task"], result["run_index"]


def test_eight_jobs_finish_in_a_fraction_of_the_serial_time_with_the_same_results(
        tmp_path: Path) -> None:
    with paced(delay_s=0.4) as url:
        timings, found = {}, {}
        for jobs in (1, 8):
            folder = tmp_path / f"jobs-{jobs}"
            ran = benchrig("run", *REASONING, "--model", "a", "--model", "b", "--driver",
                           "openai", "--provider", url, "--jobs", str(jobs),
                           results_dir=folder)
            assert ran.code == 1, ran.stderr  # the paced answers are wrong: a result, not a crash
            found[jobs] = results(folder)
            # from the first attempt's start to the last one's end, as the results record them:
            # the process's start-up is the same on both sides and only blurs the ratio (at
            # load ~15 the whole commands took 9.0 s and 4.2 s: issue 23)
            spans = [span(r) for r in found[jobs]]
            timings[jobs] = max(end for _, end in spans) - min(start for start, _ in spans)
    assert timings[8] < 0.45 * timings[1], timings  # 16 × 0.4 s serial, 2 × 0.4 s in 8 lanes
    assert sorted(map(attempt, found[1])) == sorted(map(attempt, found[8]))
    assert len(found[8]) == 16
    assert {(attempt(r), r["result"]) for r in found[1]} == \
        {(attempt(r), r["result"]) for r in found[8]}
    assert {r["settings"]["jobs"] for r in found[8]} == {8}
    assert max(r["settings"]["in_flight"] for r in found[8]) == 8
    assert {r["settings"]["in_flight"] for r in found[1]} == {1}


def test_speed_tasks_run_with_nothing_else_in_flight(tmp_path: Path) -> None:
    with paced(delay_s=0.2) as url:
        ran = benchrig("run", "--suite", "speed", "--suite", "reasoning", "--model", "a",
                       "--driver", "openai", "--provider", url, "--jobs", "8",
                       results_dir=tmp_path)
    assert ran.code == 1, ran.stderr
    found = results(tmp_path)
    speed = [r for r in found if r["suite"] == "speed"]
    assert len(speed) == 2 and len(found) == 14
    assert all(r["settings"]["in_flight"] == 1 for r in speed)
    assert not any(overlap(s, other) for s in speed for other in found if other is not s)
    assert any(r["settings"]["in_flight"] > 1 for r in found)  # the rest did overlap


@pytest.mark.model
def test_embedded_model_attempts_never_overlap(tmp_path: Path) -> None:
    ran = benchrig("run", "bat-and-ball", "two-trains", "--model", "smollm2", "--runs", "2",
                   "--max-tokens", "8", "--jobs", "4", results_dir=tmp_path)
    assert ran.code in (0, 1), ran.stderr
    found = results(tmp_path)
    assert len(found) == 4 and {r["driver"] for r in found} == {"llamacpp"}
    assert all(r["settings"]["in_flight"] == 1 and r["settings"]["jobs"] == 4 for r in found)
    assert not any(overlap(a, b) for a in found for b in found if a is not b)


def start(url: str, folder: Path, *extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "benchrig.cli", "run", "--suite", "reasoning", "--model",
            "a", "--model", "b", "--runs", "2", "--driver", "openai", "--provider", url,
            "--jobs", "4", "--results-dir", str(folder), *extra]
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_killed_at_random_points_then_resumed_every_attempt_has_exactly_one_result(
        tmp_path: Path) -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    folder = tmp_path / "results"
    with paced(delay_s=0.25) as url:
        for kill in (signal.SIGINT, signal.SIGKILL, signal.SIGINT, signal.SIGKILL):
            proc = start(url, folder, "--resume")
            time.sleep(rng.uniform(1.0, 4.0))  # start-up takes 1–2 s on a busy machine
            proc.send_signal(kill)
            _, err = proc.communicate(timeout=60)
            if "interrupted after " in err:
                assert proc.returncode == 130 and "--resume" in err, (seed, err)
            else:  # still starting (130), or finished before the signal (1: wrong answers;
                # 0: nothing left to run)
                assert proc.returncode in (0, 1, 130, -signal.SIGKILL), (seed, proc.returncode,
                                                                         err)
        proc = start(url, folder, "--resume")
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 1), (seed, err)
    found = results(folder)
    counts = Counter(map(attempt, found))
    assert len(counts) == 2 * 12 * 2, seed
    assert set(counts.values()) == {1}, (seed, [k for k, n in counts.items() if n > 1])
    names = {p.name for p in folder.iterdir()}
    expected = {p.name for p in folder.glob("*.json")} | \
        {r["transcript_file"] for r in found} | {".benchrig.lock"}
    assert names == expected, (seed, sorted(names - expected))  # no partial file of any kind


def test_resume_keeps_run_k_as_run_k_and_skips_only_the_same_experiment(
        tmp_path: Path) -> None:
    with paced(delay_s=0.0) as url:
        def run(*extra: str, code: int = 1) -> list[dict[str, Any]]:
            ran = benchrig("run", "bat-and-ball", "--model", "a", "--driver", "openai",
                           "--provider", url, *extra, results_dir=tmp_path)
            assert ran.code == code, ran.stderr
            return results(tmp_path)

        assert len(run("--runs", "2")) == 2
        after = run("--runs", "4", "--resume")  # runs 2 and 3 only
        assert sorted(r["run_index"] for r in after) == [0, 1, 2, 3]
        assert len(run("--runs", "4", "--resume", code=0)) == 4  # nothing left to run
        assert len(run("--runs", "4", "--resume", "--temperature", "0.5")) == 8
        labelled = run("--runs", "1", "--resume", "--label", "exp-2")
        assert len(labelled) == 9
        assert [r["run_index"] for r in labelled if r.get("label") == "exp-2"] == [0]


def test_ctrl_c_leaves_no_agent_running_and_no_result(tmp_path: Path) -> None:
    """Agents run in sessions of their own, which a terminal's Ctrl-C does not reach: the
    run stops its attempts in flight, and each kills its agent's whole process group.
    Without bubblewrap, whose --die-with-parent would otherwise hide a leak."""
    import secrets

    from tests.conftest import WITHOUT_BUBBLEWRAP
    from tests.helpers.agents import FIXTURES
    from tests.helpers.processes import host_processes, wait_dead
    from tests.helpers.staging import stage_files

    marker = f"fake-agent-child-{secrets.token_hex(6)}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAKE_AGENT_MARKER": marker,
           "BENCHRIG_CLAUDE_BIN": str(FIXTURES / "claude"),
           "FAKE_AGENT_SCENARIO": str(FIXTURES / "streams" / "claude-hang.jsonl"),
           "FAKE_AGENT_FILES": str(stage_files(tmp_path))}
    folder = tmp_path / "results"
    proc = subprocess.Popen([*WITHOUT_BUBBLEWRAP, "run", "lru-cache",
                             "flatten-dict", "--driver", "claude", "--model", "sonnet",
                             "--jobs", "2", "--results-dir", str(folder)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while len(seen) < 2 and time.monotonic() < deadline and proc.poll() is None:
        seen |= host_processes(marker)
        time.sleep(0.05)
    assert len(seen) == 2, proc.stderr.read() if proc.poll() is not None else "not seen"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted after 0/2" in err
    assert all(wait_dead(pid, within=5) for pid in seen)  # no agent outlived the run
    assert not list(folder.glob("*.json*"))
