"""Forged or impossible metrics are null with a reason, and no summary averages them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers.ollama import OllamaDriver
from benchrig.metrics import measured
from benchrig.plausible import (
    MAX_COST_USD,
    MAX_DECODE_TOKENS_PER_S,
    TEXTLESS_TOKENS,
    rejections,
)
from benchrig.report.grouping import grouped
from benchrig.report.scorecard import scorecards
from benchrig.report.table import model_rows
from tests.conftest import cli_call
from tests.helpers.agents import attempt, stream
from tests.helpers.loopback import Loopback, Reply, ndjson
from tests.helpers.ollama import FINAL, GOOD, done, line, routes
from tests.helpers.ollama import request as ollama_request
from tests.helpers.results import result
from tests.helpers.scorecard_fixture import Builder


@pytest.mark.slow
def test_forged_agent_usage_is_null_with_reasons(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    """A tool call can print to the agent's stdout: 9e15 output tokens and $1,000,000. Those
    come after the tool ran, so they are not counted at all (drivers.agent); the bounds still
    hold for what an agent reports before (tests below)."""
    done = attempt(monkeypatch, tmp_path, "claude", "claude-forged-usage", "sonnet")
    m = done.metrics
    assert m["output_tokens"] == 240 and "output_tokens" in m["partial"]  # before the tool
    assert m["tokens_per_s"] < 1e5 and m["cost_usd"] is None
    assert "first tool ran" in m["rejected"]["cost_usd"]
    shown = cli_call("summary", str(tmp_path / "results"), results_dir=tmp_path / "results")
    assert shown.code == 0, shown.stderr
    rates = [float(n.replace(",", "")) for n in re.findall(r"[\d,]+\.\d+|\d+e\+\d+", shown.stdout)]
    assert rates and max(rates) < 1e5, shown.stdout


def test_non_finite_agent_usage_is_null_with_reasons(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """JSON's 1e400 is inf: unknown, and the result says what the agent sent."""
    lines = stream("claude-inf-usage").splitlines()  # its figures before any tool ran
    text = "\n".join(line for line in lines if '"tool_use"' not in line
                     and '"tool_result"' not in line) + "\n"
    done = attempt(monkeypatch, tmp_path, "claude", "claude-inf-usage", "sonnet", text=text)
    # The figures below come from the agent's result event: an attempt that never read it (its
    # agent refused, killed or failed) has them null with no reason, and says why here (under
    # load this test once failed with only "KeyError: 'rejected'", the cause unseen).
    assert done.result["result"] == "pass", done.result["notes"]
    m = done.metrics
    assert (m["output_tokens"], m["tokens_per_s"], m["cost_usd"]) == (None, None, None)
    assert m["rejected"]["output_tokens"] == "inf is not a finite number of at least 0"
    assert m["rejected"]["cost_usd"] == "inf is not a finite number of at least 0"


def absurd(model: str, tps: float | None, cost: float | None) -> dict[str, Any]:
    return result(model, "pass", tps, 200.0, cost)


def test_summary_does_not_average_absurd_values() -> None:
    """Old or hand-edited result files: 1e300 tokens/s and a $1e9 attempt."""
    rows = model_rows(grouped([absurd("m", 100.0, 0.5), absurd("m", 1e300, 1e9),
                       absurd("m", 50.0, float("inf"))]))
    assert rows[0].tokens_per_s == 75.0
    assert rows[0].cost_usd == 0.5


def test_scorecard_does_not_average_absurd_values() -> None:
    cards = Builder()
    cards.add("m", "ollama", "speed", "speed-short-decode", 0, "no-test", tps=80.0,
              prefill=300.0, output_tokens=100, ttft_ms=500.0)
    cards.add("m", "ollama", "speed", "speed-short-decode", 1, "no-test", tps=1e300,
              prefill=1e300, output_tokens=9_000_000_000_000_000, ttft_ms=1e300)
    card = scorecards(grouped(cards.results))[0].suites["speed"]
    assert card.decode_tps == 80.0 and card.prefill_tps == 300.0
    assert card.avg_output_tokens == 100.0 and card.avg_ttft_s == 0.5
    assert card.output_tokens is None  # a sum over a rejected count is unknown
    assert card.speed[0].decode_tps == 80.0 and card.speed[0].output_tokens == 100.0


def figures(output_tokens: int, wall_s: float = 2.0, ttft_ms: float = 1000.0,
            cost_usd: float | None = None, received_bytes: int | None = None,
            ) -> dict[str, Any]:
    metrics = measured(wall_s=wall_s, ttft_ms=ttft_ms, answer_ttft_ms=ttft_ms,
                       thinking_chars=0, output_tokens=output_tokens, output_source="server",
                       input_tokens=10, input_source="server", engine={}, cost_usd=cost_usd,
                       received_bytes=received_bytes)
    return metrics.to_json()


def test_values_at_a_bound_are_kept_and_just_beyond_are_not() -> None:
    ceiling = int(MAX_DECODE_TOKENS_PER_S)  # over a 1 s decode span: exactly the ceiling
    at = figures(ceiling, cost_usd=MAX_COST_USD)
    assert at["tokens_per_s"] == MAX_DECODE_TOKENS_PER_S and at["cost_usd"] == MAX_COST_USD
    assert "rejected" not in at
    beyond = figures(ceiling + 1, cost_usd=MAX_COST_USD + 0.01)
    assert beyond["tokens_per_s"] is None and beyond["cost_usd"] is None
    assert beyond["output_tokens"] == ceiling + 1  # the count is possible over the whole wall
    assert set(beyond["rejected"]) == {"tokens_per_s", "cost_usd"}
    # output tokens: at most one per byte received, plus the tokens that carry no text
    assert figures(1000 + TEXTLESS_TOKENS, received_bytes=1000)["output_tokens"] == 1064
    over = figures(1001 + TEXTLESS_TOKENS, received_bytes=1000)
    assert over["output_tokens"] is None
    assert over["rejected"]["output_tokens"].startswith("1,065 is more than the 1,000 bytes")
    # ... and at most the decode ceiling over the whole wall time
    wall = ceiling * 2 + TEXTLESS_TOKENS
    assert figures(wall, ttft_ms=0.0)["output_tokens"] == wall
    assert figures(wall + 1, ttft_ms=0.0)["output_tokens"] is None


@pytest.mark.parametrize(("name", "value"), [
    ("wall_s", -1.0), ("ttft_ms", -0.5), ("ttft_ms", 1e300), ("prefill_tokens_per_s", 2e6),
    ("input_tokens", 10**10), ("cost_usd", float("nan")), ("load_time_s", float("inf")),
])
def test_impossible_figures_have_a_reason(name: str, value: float) -> None:
    stored = {"wall_s": 2.0, "ttft_ms": 100.0, "output_tokens": 10, "tokens_per_s": 5.0,
              name: value}
    assert name in rejections(stored)


def test_ollama_count_beyond_the_bytes_received_is_rejected() -> None:
    """A server claiming a million tokens for an answer of a few hundred bytes."""
    claimed = {**FINAL, "eval_count": 1_000_000}
    chat = Reply(ndjson(line(GOOD), done(**claimed)), content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server:
        out = OllamaDriver().run(ollama_request(url=server.url))
    received = len(GOOD.encode())
    assert out.metrics.output_tokens is None and out.metrics.tokens_per_s is None
    assert out.metrics.rejected["output_tokens"] == (
        f"1e+06 is more than the {received:,} bytes received (+{TEXTLESS_TOKENS} tokens "
        "without text)")
    honest = {**FINAL, "eval_count": received + TEXTLESS_TOKENS}
    chat = Reply(ndjson(line(GOOD), done(**honest)), content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server:
        out = OllamaDriver().run(ollama_request(url=server.url))
    assert out.metrics.output_tokens == received + TEXTLESS_TOKENS
