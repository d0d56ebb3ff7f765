"""The openai driver against the real embedded model behind `benchrig serve` on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.settings import Settings
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.openai import OpenAIDriver
from benchrig.local.embedded_server import EmbeddedServer, ServerConfig
from benchrig.prompt import render
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS, benchrig

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    # One thread: llama.cpp's workers spin-wait for each other, which collapses when the
    # cores are shared (2.9 tokens/s measured here under load, against 60 when quiet).
    with EmbeddedServer(ServerConfig(context_size=4096, threads=1)) as running:
        yield running


def test_full_lru_cache_attempt(server: EmbeddedServer, results_dir: Path) -> None:
    ran = benchrig("lru-cache", "smollm2", "openai", server.base_url, results_dir=results_dir,
                   command=[str(ROOT / "scripts" / "run.sh")])
    (path,) = results_dir.glob("*.json")
    result = json.loads(path.read_text())
    validate(result)
    assert result["result"] in ("pass", "fail"), result["notes"]  # whatever the model earns
    assert ran.code == (0 if result["result"] == "pass" else 1)
    m = result["metrics"]
    assert m["ttft_ms"] > 0 and m["tokens_per_s"] > 0 and m["output_tokens"] > 0
    # llama.cpp's own counters for this very completion, read back from the server
    perf = m["engine"]["server_perf"]
    assert perf["source"] == "llama_perf_context"
    assert (m["input_tokens"], m["input_tokens_source"]) == (perf["prompt_n"], "server")
    assert m["prefill_tokens_per_s"] == perf["prompt_per_second"] > 0
    # that server streams no usage: the count is the one it keeps for the completion
    assert (m["output_tokens"], m["output_tokens_source"]) == (perf["completion_tokens"],
                                                               "server")
    assert m["output_tokens"] - perf["predicted_n"] in (0, 1)
    # causality, not speed: the client's clock spans the engine's
    assert m["ttft_ms"] >= perf["prompt_ms"]
    assert m["wall_s"] * 1000 >= perf["prompt_ms"] + perf["predicted_ms"]
    # BenchRig runs this model itself: it costs nothing, and the result says why
    assert (m["cost_usd"], m["cost_source"]) == (0.0, "local model (benchrig serve): no charge")
    assert result["settings"]["chat_format"] == "chatml"
    assert result["settings"]["threads"] == server.threads == 1
    assert result["settings"]["context_size"] == 4096
    assert result["environment"]["runtime"]["name"] == "llama-cpp-python"
    assert result["environment"]["runtime"]["served"]["prompt_prefix_reuse"] is False


def attempt(server: EmbeddedServer, max_tokens: int, task_id: str = "valid-brackets") -> Any:
    task = load_task(TASKS / f"{task_id}.md")
    return OpenAIDriver().run(DriverRequest(task.view(), render(task), "smollm2", server.base_url,
                                            Settings(max_tokens=max_tokens, timeout_s=120)))


def test_each_request_pays_its_own_prefill(server: EmbeddedServer) -> None:
    first, second = attempt(server, 4), attempt(server, 4)
    for out in (first, second):  # the same prompt twice: no prefix reused from the first
        assert out.metrics.engine["server_perf"]["prompt_n"] == out.metrics.input_tokens > 20


def test_concurrent_streams_both_get_answers(server: EmbeddedServer) -> None:
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda _: attempt(server, 12), range(2)))
    for out in outs:  # llama-cpp-python's default would have cut one of them short
        assert out.transcript.finish_reason == "length"
        assert out.metrics.output_tokens >= 11 and out.transcript.answer.strip()


def test_output_tokens_are_the_servers_count_not_the_stream_events(
        server: EmbeddedServer) -> None:
    """Polish text: a multi-byte character split over tokens arrives as one event, so events
    undercount tokens. At a length stop the server generated exactly max_tokens tokens."""
    out = attempt(server, 48, "polish-declension")
    m, perf = out.metrics, out.metrics.engine["server_perf"]
    assert out.transcript.finish_reason == "length"
    assert (m.output_tokens, m.output_tokens_source) == (48, "server")
    assert perf["completion_tokens"] == 48
    assert perf["predicted_n"] == 47  # llama.cpp never decodes the last token sampled
    assert m.engine["stream"]["token_events"] <= 48
