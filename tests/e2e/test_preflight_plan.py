"""Sizing a run before spending on it: --dry-run (the plan, an ETA from past results,
nothing contacted or written), --limit, --sample with --seed; and --runs > 1 at
temperature 0, which would repeat one greedy answer: sampled, or identical when asked."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from benchrig.resultio.files import load_results
from tests.conftest import cli_call
from tests.helpers.loopback import Loopback, Reply
from tests.helpers.openai import USAGE, chunk, stream_reply
from tests.helpers.result_sets import attempt, write

TASK = "bat-and-ball"


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _tasks_line(stdout: str) -> str:
    return next(line.strip() for line in stdout.splitlines()
                if line.strip().startswith("tasks ("))


def test_dry_run_prints_the_plan_and_touches_nothing(results_dir: Path) -> None:
    url = _dead_url()  # a dry run needs no server: nothing is contacted
    ran = cli_call("run", "--suite", "reasoning", "-m", "a", "-m", "b", "-d", "openai",
                   "-p", url, "--runs", "2", "--jobs", "4", "--dry-run",
                   "--allow-identical", results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    first = ran.stdout.splitlines()[0]
    count = int(first.split()[0])
    assert count % 4 == 0 and "--jobs 4" in first
    assert "ETA unknown" in ran.stdout
    assert list(results_dir.iterdir()) == []
    past = [attempt("a", TASK, "pass", run=k, agent="openai", provider=url,
                    started=f"2026-11-30T10:0{k}:00Z") for k in range(3)]
    for k, r in enumerate(past):
        r["metrics"]["wall_s"] = 10.0 * (k + 1)  # median 20 s
    write(results_dir, past)
    ran = cli_call("run", TASK, "-m", "a", "-d", "openai", "-p", url, "--runs", "2",
                   "--dry-run", "--allow-identical", results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    assert "ETA ≈ 40 s from past results of 2 of 2 attempts" in ran.stdout
    assert len(list(results_dir.iterdir())) == 3  # the past results only


def test_limit_and_a_seeded_sample(results_dir: Path) -> None:
    def tasks(*args: str) -> str:
        ran = cli_call("run", "--suite", "reasoning", "-d", "openai", "-p", _dead_url(),
                       "-m", "m", "--dry-run", *args, results_dir=results_dir)
        assert ran.code == 0, ran.stderr
        return _tasks_line(ran.stdout)

    every = tasks()
    assert tasks("--limit", "2").startswith("tasks (2): ")
    assert tasks("--limit", "2").split(": ")[1] == ", ".join(every.split(": ")[1].split(", ")[:2])
    one = tasks("--sample", "3", "--seed", "7")
    assert one.startswith("tasks (3): ") and one == tasks("--sample", "3", "--seed", "7")
    draws = {tasks("--sample", "3", "--seed", str(seed)) for seed in range(6)}
    assert len(draws) > 1  # the seed chooses the draw


def _server(bodies: list[Any]) -> dict[tuple[str, str], Any]:
    answer = stream_reply(chunk({"role": "assistant", "content": "Final answer: 5 cents"}),
                          chunk({}, "stop"), chunk(None, usage=USAGE), "[DONE]")

    def chat(body: Any) -> Reply:
        bodies.append(body)
        return answer

    return {("POST", "/v1/chat/completions"): chat}


def test_repeats_at_temperature_0_are_sampled_unless_identical_is_asked(
        results_dir: Path, tmp_path: Path) -> None:
    bodies: list[Any] = []
    with Loopback(_server(bodies)) as server:
        ran = cli_call("run", TASK, "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       "--runs", "3", results_dir=results_dir)
        assert ran.code == 0, ran.stderr
        assert "--runs 3 at temperature 0 would repeat one answer" in ran.stderr
        assert [(b["temperature"], b["seed"]) for b in bodies] == [(0.2, 0), (0.2, 1), (0.2, 2)]
        found = load_results([results_dir]).results
        assert {r["settings"]["repeats"] for r in found} == {"sampled"}
        assert {r["settings"]["temperature_requested"] for r in found} == {0.2}

        bodies.clear()
        other = tmp_path / "identical"
        other.mkdir()
        ran = cli_call("run", TASK, "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       "--runs", "2", "--allow-identical", results_dir=other)
        assert ran.code == 0, ran.stderr
        assert "repeat one greedy answer" in ran.stderr
        assert {b["temperature"] for b in bodies} == {0.0}
        assert {r["settings"]["repeats"] for r in load_results([other]).results} == {
            "identical"}

        bodies.clear()
        chosen = tmp_path / "chosen"
        chosen.mkdir()
        ran = cli_call("run", TASK, "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       "--runs", "2", "--temperature", "0.7", results_dir=chosen)
        assert ran.code == 0 and "temperature 0" not in ran.stderr
        assert {b["temperature"] for b in bodies} == {0.7}
        assert all("repeats" not in r["settings"] for r in load_results([chosen]).results)
