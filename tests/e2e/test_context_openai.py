"""The context suite end to end through the `openai` driver against `benchrig serve` (window
fixed by the server at 8192): the server's tokenizer fills each prompt, the server reports its
memory, and nothing is reloaded. A short ladder of the bundled scenario: its 4096 step runs
here only, every other window of it on the embedded model in test_context_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.local.embedded_server import EmbeddedServer, ServerConfig
from benchrig.resultio.files import validate
from tests.conftest import Ran, benchrig, cli_call
from tests.helpers.context import scenario

pytestmark = pytest.mark.model

# 384 to 3072 prompt tokens: TTFT grows with the window well past the 4× asserted, at a third
# of the full ladder's prompt tokens (its 6144-token step alone is half of them)
WINDOWS = [512, 1024, 4096]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ran, dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("results")
    task = scenario(tmp_path_factory.mktemp("tasks"), "context-short", WINDOWS)
    with EmbeddedServer(ServerConfig(context_size=8192, threads=1)) as server:
        done = benchrig("run", str(task), "--model", "smollm2", "--driver", "openai",
                        "--provider", server.base_url, results_dir=folder, timeout=3600)
    results = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        validate(data)
        results.append(data)
    (result,) = results
    return done, result, folder


def test_a_short_ladder_with_4096_runs_through_the_server(
        ran: tuple[Ran, dict[str, Any], Path]) -> None:
    done, result, _ = ran
    assert done.code in (0, 1), done.stderr
    steps = result["evidence"]["context"]["steps"]
    assert [s["window"] for s in steps] == WINDOWS
    assert all(s["error"] is None for s in steps), [s["message"] for s in steps]
    ttfts = [s["ttft_ms"] for s in steps]
    assert ttfts[-1] > 4 * ttfts[0], ttfts
    for step in steps:
        # the server's window is fixed: recorded, and nothing reloads
        assert step["context_size"] == 8192
        assert step["warmup"]["ran"] is False and step["load_time_s"] is None
        assert step["fill_method"] == "server tokenizer"
        assert step["fill_whole_prompt"] is False
        # the server's count adds the chat template's own tokens to the text filled
        extra = step["prompt_tokens_actual"] - step["prompt_tokens_counted"]
        assert 0 < extra <= 16, step
        assert step["prompt_tokens_target"] - step["prompt_tokens_counted"] <= 3
        memory = step["memory"]
        assert memory["source"] == "benchrig serve (the server's process)"
        assert memory["kv_cache_bytes"] == 30 * 3 * 64 * 2 * 2 * 8192
        assert memory["rss_after_bytes"] > 0


def test_the_summary_shows_the_windows(ran: tuple[Ran, dict[str, Any], Path]) -> None:
    _, _, folder = ran
    text = cli_call("summary", str(folder), results_dir=folder).stdout
    assert "context_retrieval_pct " in text and "spill point n/a: CPU only" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("      ")]
    assert [r[0] for r in rows] == ["window", *map(str, WINDOWS)]
