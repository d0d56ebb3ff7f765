"""The context suite end to end on the embedded model (SmolLM2-135M, trained on 8192 tokens):
the bundled scenario's windows up to the trained one, plus one past it, through the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Ran, benchrig, cli_call
from tests.helpers.context import scenario
from tests.helpers.results import valid_results

pytestmark = pytest.mark.model

# The bundled ladder but its 4096 step (3,072 prompt tokens, a third of this run's time: 77 of
# 245 s at load 10), which runs through the server in test_context_openai.py: the smallest
# steps for the TTFT's growth, the trained window itself, and the one past it.
WINDOWS = [512, 1024, 2048, 8192]
PAST = 16384  # twice SmolLM2's trained context
LONG_S = 3600  # 8,832 prompt tokens on one shared core: minutes when other work runs


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ran, dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("results")
    task = scenario(tmp_path_factory.mktemp("tasks"), "context-past", [*WINDOWS, PAST])
    done = benchrig("run", str(task), "--model", "smollm2", "--threads", "1",
                    results_dir=folder, timeout=LONG_S)
    (result,) = valid_results(folder)
    return done, result, folder


def steps_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = result["evidence"]["context"]["steps"]
    return steps


def test_every_window_but_4096_runs_and_the_one_past_training_is_an_engine_failure(
        ran: tuple[Ran, dict[str, Any], Path]) -> None:
    done, result, _ = ran
    assert done.code in (0, 1), done.stderr
    steps = steps_of(result)
    assert [s["window"] for s in steps] == [*WINDOWS, PAST]
    assert all(s["error"] is None and s["finish_reason"] in ("stop", "length")
               for s in steps[:-1]), [s["message"] for s in steps]
    past = steps[-1]
    assert past["passed"] is False and past["error"]["kind"] == "infra"
    assert "n_ctx_train (8192)" in past["error"]["message"]
    assert result["checks"]["total"] == len(WINDOWS) + 1 and result["result"] in ("pass", "fail")


def test_prompts_are_filled_to_the_token_target(ran: tuple[Ran, dict[str, Any], Path]) -> None:
    _, result, _ = ran
    for step in steps_of(result)[:-1]:
        assert step["fill_method"] == "tokenizer" and step["fill_whole_prompt"] is True
        assert step["prompt_tokens_target"] == round(0.75 * step["window"])
        # the engine's own count of the prompt it evaluated
        assert step["prompt_tokens_source"] == "counted"
        assert abs(step["prompt_tokens_actual"] - step["prompt_tokens_target"]) <= \
            0.02 * step["prompt_tokens_target"]
        assert step["context_size"] == step["window"]  # n_ctx set per window


def test_ttft_grows_with_the_window_and_load_is_apart(
        ran: tuple[Ran, dict[str, Any], Path]) -> None:
    _, result, _ = ran
    steps = steps_of(result)[:-1]
    ttfts = [s["ttft_ms"] for s in steps]
    assert ttfts[-1] > 4 * ttfts[0] and ttfts[-1] > ttfts[2], ttfts
    for step in steps:
        assert step["warmup"]["ran"] is True  # a new n_ctx rebuilt the model, untimed
        assert step["load_time_s"] is not None and step["load_time_s"] > 0
        assert step["prefill_tokens_per_s"] > 0 and step["prefill_tokens_per_s_client"] > 0


def test_memory_figures_are_present(ran: tuple[Ran, dict[str, Any], Path]) -> None:
    _, result, _ = ran
    steps = steps_of(result)[:-1]
    for step in steps:
        memory = step["memory"]
        assert memory["rss_before_bytes"] > 0 and memory["rss_after_bytes"] > 0
        assert memory["placement"] == "cpu" and memory["reason"] is None
    kv = [s["memory"]["kv_cache_bytes"] for s in steps]
    # SmolLM2: 30 layers × 3 KV heads × 64 dims × 2 (K, V) × 2 bytes per cell
    assert kv == [30 * 3 * 64 * 2 * 2 * w for w in WINDOWS]
    assert result["evidence"]["context"]["spill_point"] is None
    assert result["evidence"]["context"]["spill_note"] == "n/a: CPU only"


def test_codes_differ_per_window(ran: tuple[Ran, dict[str, Any], Path]) -> None:
    _, result, _ = ran
    codes = [s["code"] for s in steps_of(result)]
    assert len(set(codes)) == len(codes)
    for step in steps_of(result)[:-1]:
        if step["passed"]:  # found in the answer, which the record keeps the end of
            assert str(step["code"]) in step["answer_excerpt"].replace(",", "")


def test_the_run_prints_the_per_window_table(ran: tuple[Ran, dict[str, Any], Path]) -> None:
    done, _, folder = ran
    for text in (done.stdout, cli_call("summary", str(folder), results_dir=folder).stdout):
        assert "context_retrieval_pct " in text and "spill point n/a: CPU only" in text
        rows = [line.split() for line in text.splitlines() if line.startswith("      ")]
        assert [r[0] for r in rows] == ["window", *map(str, WINDOWS), str(PAST)]
    csv = cli_call("summary", "-f", "csv", str(folder), results_dir=folder).stdout
    header = csv.splitlines()[0].split(",")
    assert {"context_retrieval_rate", "context_8192_prompt_tokens_actual",
            "context_8192_ttft_sec", "load_time_sec"} <= set(header)


def test_codes_differ_per_run(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    task = scenario(tmp_path, "context-small", [512])
    done = benchrig("run", str(task), "--model", "smollm2", "--threads", "1", "--runs", "2",
                    results_dir=folder)
    assert done.code in (0, 1), done.stderr
    results = valid_results(folder)
    codes = {s["code"] for r in results for s in steps_of(r)}
    assert len(results) == 2 and len(codes) == 2
