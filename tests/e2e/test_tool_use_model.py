"""The tool-use suite end to end on the real embedded model: in process (llamacpp), and through
`benchrig serve` with the openai driver. Whatever SmolLM2 earns; the point is a complete,
valid run with every turn's evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig.local.embedded_server import EmbeddedServer, ServerConfig
from tests.conftest import benchrig
from tests.helpers.results import valid_results

pytestmark = pytest.mark.model

CASES = ("tool-select-weather", "tool-nocall-arithmetic", "tool-twostep-weather-answer")
MAX_TOKENS = "24"



def complete(found: list[dict[str, Any]], driver: str) -> None:
    """Every case judged (no error, nothing unsupported), with its turns' evidence."""
    assert sorted(r["task"] for r in found) == sorted(CASES)
    for r in found:
        assert r["result"] in ("pass", "fail"), r["notes"]
        assert r["driver"] == driver and r["suite"] == "tool_use"
        assert r["settings"]["tool_chat_format"].startswith("chatml-function-calling")
        assert r["settings"]["stream"] is False
        turns = r["evidence"]["tool_use"]["turns"]
        assert turns[0]["reply"] is not None and turns[0]["request_messages"][0]["role"] == \
            "system"
        assert all(t["verdict"] in ("pass", "fail", "skipped") and t["reason"] for t in turns)
        m = r["metrics"]
        assert m["wall_s"] > 0 and m["ttft_ms"] is None and m["tokens_per_s"] is None
        assert m["output_tokens"] > 0 and m["output_tokens_source"] == (
            "counted" if driver == "llamacpp" else "server")


def test_in_process(results_dir: Path) -> None:
    ran = benchrig("run", *CASES, "--model", "smollm2", "--max-tokens", MAX_TOKENS,
                   results_dir=results_dir)
    assert ran.code in (0, 1), ran.stderr
    complete(valid_results(results_dir), "llamacpp")
    assert "tool_use  task success" in ran.stdout and "structured calls" in ran.stdout


def test_through_benchrig_serve_and_the_openai_driver(results_dir: Path) -> None:
    with EmbeddedServer(ServerConfig(context_size=2048)) as server:
        ran = benchrig("run", *CASES, "--model", "smollm2", "--driver", "openai",
                       "--provider", server.base_url, "--max-tokens", MAX_TOKENS,
                       results_dir=results_dir)
    assert ran.code in (0, 1), ran.stderr
    found = valid_results(results_dir)
    complete(found, "openai")
    assert all(r["environment"]["runtime"]["name"] == "llama-cpp-python" for r in found)
