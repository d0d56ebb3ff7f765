"""The context suite on Ollama, through a recorded stand-in that reloads the model when num_ctx
changes and moves the KV cache out of GPU memory at a chosen window: warm-up order,
load_time_s, placement per window and the spill point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.config import Config
from benchrig.drivers.ollama import OllamaDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.report import render
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.loopback import Loopback
from tests.helpers.ollama import MODEL, ContextStandIn

WINDOWS = [512, 1024, 2048, 4096, 8192]


def scenario(folder: Path, steps: list[int]) -> Path:
    """The bundled scenario with other steps (a second context scenario is one more file)."""
    text = (TASKS / "context-needle.md").read_text(encoding="utf-8")
    path = folder / "context-probe.md"
    path.write_text(text.replace("id: context-needle", "id: context-probe")
                    .replace("steps: [512, 1024, 2048, 4096, 8192]", f"steps: {steps}"),
                    encoding="utf-8")
    return path


def attempt(stand_in: ContextStandIn, tmp_path: Path, steps: list[int],
            runs: int = 1) -> list[dict[str, Any]]:
    task = load_task(scenario(tmp_path, steps))
    folder = tmp_path / "results"
    folder.mkdir(exist_ok=True)
    results = []
    with Loopback(stand_in.routes()) as server:
        for run in range(runs):
            settings = settings_for(task, Overrides(), model=MODEL, config=Config(),
                                    run_index=run)
            results.append(run_attempt(task, MODEL, OllamaDriver(), server.url, settings,
                                       folder, run_index=run).result)
    return results


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[ContextStandIn, list[dict[str, Any]]]:
    stand_in = ContextStandIn(spill_at=4096, trained=8192)
    results = attempt(stand_in, tmp_path_factory.mktemp("ollama"), [*WINDOWS, 16384], runs=2)
    return stand_in, results


def steps_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = result["evidence"]["context"]["steps"]
    return steps


def test_each_window_is_loaded_untimed_before_its_timed_request(
        ran: tuple[ContextStandIn, list[dict[str, Any]]]) -> None:
    stand_in, _ = ran
    # per window and run: the load-only request, the warm-up chat, then the timed chat
    expected = [entry for w in WINDOWS for entry in (("load", w), ("warm", w), ("chat", w))]
    assert stand_in.log == expected * 2
    assert stand_in.reloads_by_chat == []  # no timed (or warm-up) request paid a reload


def test_load_time_is_the_warm_up_and_never_in_the_timed_figures(
        ran: tuple[ContextStandIn, list[dict[str, Any]]]) -> None:
    stand_in, results = ran
    for result in results:
        for step in steps_of(result)[:-1]:
            assert step["warmup"]["ran"] is True
            assert step["load_time_s"] >= stand_in.load_seconds
            assert step["ttft_ms"] < stand_in.load_seconds * 1000  # the load is not in it
            assert step["context_size"] == step["window"]  # num_ctx sent per window
            assert step["fill_method"] == "estimate"
            # the estimate fills the message text; the engine counts the template too
            assert 0 <= step["prompt_tokens_target"] - step["prompt_tokens_counted"] <= 3
            assert step["prompt_tokens_actual"] == step["prompt_tokens_counted"] + 10
        assert result["metrics"]["load_time_s"] == pytest.approx(
            sum(s["load_time_s"] for s in steps_of(result)[:-1]))


def test_placement_per_window_and_the_spill_point(
        ran: tuple[ContextStandIn, list[dict[str, Any]]]) -> None:
    _, results = ran
    for result in results:
        memory = [s["memory"] for s in steps_of(result)]
        assert [m["placement"] for m in memory] == ["gpu", "gpu", "gpu", "split", "split",
                                                    None]
        assert all(m["size_vram_bytes"] < m["size_bytes"] for m in memory[3:5])
        assert all(m["size_vram_bytes"] == m["size_bytes"] for m in memory[:3])
        assert result["evidence"]["context"]["spill_point"] == 4096
    text = render(results, "table")
    assert "spill point 4096" in text
    csv = render(results, "csv").splitlines()
    row = dict(zip(csv[0].split(","), csv[1].split(","), strict=True))
    assert row["context_spill_point"] == "4096"
    assert row["context_4096_placement"] == "split" and row["context_2048_placement"] == "gpu"


def test_a_window_past_the_trained_context_fails_alone(
        ran: tuple[ContextStandIn, list[dict[str, Any]]]) -> None:
    stand_in, results = ran
    for result in results:
        last = steps_of(result)[-1]
        assert last["window"] == 16384 and last["passed"] is False
        assert last["error"]["kind"] == "infra"
        assert "past the model's trained context (8192" in last["error"]["message"]
        assert [s["passed"] for s in steps_of(result)[:-1]] == [True] * 5
        assert result["result"] == "fail" and result["checks"]["passed"] == 5
    assert ("load", 16384) not in stand_in.log  # refused before anything was loaded
    line = next(x for x in render(results, "table").splitlines() if "context_retrieval_pct" in x)
    # the refused window is the runtime's (infra): beside the retrieval, not in it
    assert ("context_retrieval_pct 100.0% [100.0-100.0] (10/10 windows) · 2 windows failed "
            "by infra or harness") in line


def test_codes_differ_per_window_and_per_run(
        ran: tuple[ContextStandIn, list[dict[str, Any]]]) -> None:
    _, results = ran
    codes = [s["code"] for r in results for s in steps_of(r)]
    assert len(set(codes)) == len(codes)
    seeds = [r["evidence"]["context"]["needle_seed"] for r in results]
    assert seeds[0] != seeds[1]


def test_a_dead_server_is_an_error_outside_the_rate(tmp_path: Path) -> None:
    task = load_task(scenario(tmp_path, [512, 1024]))
    settings = settings_for(task, Overrides(), model=MODEL, config=Config())
    folder = tmp_path / "results"
    folder.mkdir()
    with Loopback({}) as server:
        url = server.url
    result = run_attempt(task, MODEL, OllamaDriver(), url, settings, folder).result
    assert result["result"] == "error" and result["error"]["kind"] == "infra"
    assert len(result["evidence"]["context"]["steps"]) == 2  # every window still recorded
    saved = json.loads(next(folder.glob("*.json")).read_text())
    assert saved["evidence"]["context"]["spill_note"] == "n/a: placement unknown"
