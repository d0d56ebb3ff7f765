"""Settings record what was sent: each driver's effective values, a seed per run, and a
scorecard that says when the runs were greedy repeats rather than samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers import get_driver
from benchrig.orchestrate.runner import SENT, Overrides, run_attempt, settings_for
from benchrig.report import render
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import TASKS, answer_file, cli_call
from tests.helpers import scorecard_fixture
from tests.helpers.agents import use_fixture
from tests.helpers.loopback import Loopback, Reply, ndjson
from tests.helpers.ollama import done as ollama_done
from tests.helpers.ollama import line as ollama_line
from tests.helpers.ollama import routes as ollama_routes
from tests.helpers.openai import chunk, stream_reply

TASK = "bat-and-ball"  # answer-checked: no sandbox, so each attempt is quick


def results_in(folder: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in folder.glob("*.json")]
    for result in found:
        validate(result)
    return sorted(found, key=lambda r: r["started_at"])


def test_replay_sends_nothing_so_records_think_and_seed_null(tmp_path: Path,
                                                           results_dir: Path) -> None:
    answer = answer_file(tmp_path, "Final answer: $0.05")
    ran = cli_call("run", TASK, "-m", "oracle", "-d", "replay", "-p", str(answer), "--think",
                   "--temperature", "0.7", results_dir=results_dir)
    assert ran.code in (0, 1), ran.stderr
    (settings,) = (r["settings"] for r in results_in(results_dir))
    assert {name: settings[name] for name in SENT} == dict.fromkeys(SENT)
    # what was asked is kept beside it
    assert (settings["think_requested"], settings["think_source"]) == (True, "command line")
    assert (settings["temperature_requested"], settings["seed_requested"]) == (0.7, 0)


@pytest.mark.slow
def test_openai_records_think_and_seeds_as_the_server_received_them(
        results_dir: Path) -> None:
    reply = stream_reply(chunk({"content": "Final answer: $0.05"}, "stop"),
                         chunk(usage={"prompt_tokens": 9, "completion_tokens": 5}), "[DONE]")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", TASK, "-m", "qwen3", "-d", "openai", "-p", f"{server.url}/v1",
                       "--runs", "3", "--seed", "40", "--think", "--temperature", "0.7",
                       results_dir=results_dir)
        bodies = server.posted("/v1/chat/completions")
    assert ran.code in (0, 1), ran.stderr
    assert [b["seed"] for b in bodies] == [40, 41, 42]
    assert [b["chat_template_kwargs"] for b in bodies] == [{"enable_thinking": True}] * 3
    results = results_in(results_dir)
    assert [r["settings"]["seed"] for r in results] == [40, 41, 42]
    assert all(r["settings"]["think"] is True and r["settings"]["temperature"] == 0.7
               for r in results)


@pytest.mark.slow
def test_ollama_records_think_and_seeds_as_the_server_received_them(
        results_dir: Path) -> None:
    chat = Reply(ndjson(ollama_line("Final answer: $0.05"), ollama_done()),
                 content_type="application/x-ndjson")
    with Loopback(ollama_routes(chat)) as server:
        ran = cli_call("run", TASK, "-m", "qwen3", "-d", "ollama", "-p", server.url,
                       "--runs", "2", "--think", "--temperature", "0.5",
                       "--threads", "3", results_dir=results_dir)
        bodies = [b for b in server.posted("/api/chat") if b.get("messages")]
    assert ran.code in (0, 1), ran.stderr
    assert [b["options"]["seed"] for b in bodies] == [0, 1]  # the default base seed, 0
    assert [b["think"] for b in bodies] == [True, True]
    assert [b["options"]["num_thread"] for b in bodies] == [3, 3]
    results = results_in(results_dir)
    assert [r["settings"]["seed"] for r in results] == [0, 1]
    assert [r["settings"]["think"] for r in results] == [True, True]
    assert [r["settings"]["threads"] for r in results] == [3, 3]


def test_an_agent_records_seed_and_threads_null(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    task = load_task(TASKS / "lru-cache.md")
    asked = settings_for(task, Overrides(threads=3, seed=5, temperature=0.4), run_index=2)
    done = run_attempt(task, "sonnet", get_driver("claude"), None, asked,
                       tmp_path / "results", agent="claude")
    settings = done.result["settings"]
    assert {name: settings[name] for name in SENT} == dict.fromkeys(SENT)
    assert (settings["seed_requested"], settings["threads_requested"]) == (7, 3)
    assert settings["temperature_requested"] == 0.4


def test_runs_get_the_base_seed_plus_their_index() -> None:
    task = load_task(TASKS / TASK.join(("", ".md")))
    assert [settings_for(task, Overrides(seed=10), run_index=k).seed
            for k in range(3)] == [10, 11, 12]
    assert settings_for(task, Overrides()).seed == 0


def _with(results: list[dict[str, Any]], temperature: float | None) -> list[dict[str, Any]]:
    for result in results:
        result["settings"] = {**result["settings"], "temperature": temperature}
    return results


def _alpha() -> list[dict[str, Any]]:
    return [r for r in scorecard_fixture.build() if r["model"] == "alpha"]


def test_scorecard_marks_runs_at_temperature_zero_as_deterministic() -> None:
    greedy = _with(_alpha(), 0.0)
    for text in (render(greedy, "table"), render(greedy, "markdown")):
        assert "deterministic runs (temperature 0): every run was greedy decoding" in text
        assert text.count("· deterministic runs (temperature 0)") == 4  # every suite


@pytest.mark.parametrize("temperature", [0.7, None])
def test_sampled_or_unknown_temperatures_are_not_called_deterministic(
        temperature: float | None) -> None:
    results = _with(_alpha(), temperature)
    assert "deterministic" not in render(results, "table") + render(results, "markdown")


def test_one_run_at_temperature_zero_claims_nothing() -> None:
    one_run = _with([r for r in _alpha() if r["started_at"] < scorecard_fixture._stamp(10_000)],
                    0.0)
    assert "deterministic" not in render(one_run, "table")


@pytest.mark.model
def test_llamacpp_seeds_make_real_samples_and_repeat_exactly(tmp_path: Path) -> None:
    task = load_task(TASKS / "bat-and-ball.md")
    driver = get_driver("llamacpp")

    def answer(seed: int) -> tuple[str, dict[str, Any]]:
        settings = settings_for(task, Overrides(temperature=0.8, max_tokens=24, think=True,
                                                seed=seed), model="smollm2")
        done = run_attempt(task, "smollm2", driver, None, settings, tmp_path / "results")
        sidecar = done.path.with_suffix(".transcript.jsonl").read_text().splitlines()
        return json.loads(sidecar[1])["text"], done.result["settings"]

    first, settings = answer(1)
    assert first == answer(1)[0]  # the same seed repeats the generation
    assert {answer(seed)[0] for seed in (2, 3, 4)} - {first}  # other seeds sample anew
    assert (settings["seed"], settings["temperature"]) == (1, 0.8)
    # llama.cpp has no think switch: nothing was sent, whatever was asked
    assert (settings["think"], settings["think_requested"]) == (None, True)
