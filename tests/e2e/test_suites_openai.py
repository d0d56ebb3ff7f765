"""Every answer-scored suite end to end through the `openai` driver against `benchrig serve`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchrig.local.embedded_server import EmbeddedServer, ServerConfig
from benchrig.resultio.files import validate
from tests.conftest import Ran, benchrig, cli_call

pytestmark = pytest.mark.model

SUITES = ("reasoning", "speed", "polish")
MAX_TOKENS = 32


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Ran, list[dict[str, Any]]]]:
    folder = tmp_path_factory.mktemp("results")
    with EmbeddedServer(ServerConfig(context_size=4096)) as server:
        args = [a for s in SUITES for a in ("--suite", s)]
        done = benchrig("run", *args, "--model", "smollm2", "--driver", "openai",
                        "--provider", server.base_url, "--max-tokens", str(MAX_TOKENS),
                        results_dir=folder)
    results = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        validate(data)
        results.append(data)
    yield done, results


def test_every_suite_runs_through_the_server(ran: tuple[Ran, list[dict[str, Any]]]) -> None:
    done, results = ran
    assert done.code in (0, 1), done.stderr
    assert {r["suite"] for r in results} == set(SUITES)
    assert len(results) == 12 + 2 + 3
    assert all(r["result"] != "error" for r in results), [r["notes"] for r in results]
    for r in results:
        m = r["metrics"]
        assert r["driver"] == "openai" and r["settings"]["chat_format"] == "chatml"
        assert 0 < m["output_tokens"] <= MAX_TOKENS and m["output_tokens_source"] == "server"
        assert m["ttft_ms"] > 0 and m["tokens_per_s"] > 0
        if r["suite"] == "speed":
            assert r["result"] == "no-test" and not r["truncated"]
            assert r["settings"]["think_requested"] is False  # not sent: not a thinking model
        else:
            assert r["result"] in ("pass", "fail") and r["evidence"]["check"]


def test_the_scorecards_render_for_the_served_model(ran: tuple[Ran, list[dict[str, Any]]],
                                                     tmp_path: Path) -> None:
    _, results = ran
    folder = tmp_path / "copy"
    folder.mkdir()
    for r in results:
        (folder / f"{r['run_id']}.json").write_text(json.dumps(r))
    text = cli_call("summary", str(folder), results_dir=folder)
    assert text.code == 0, text.stderr
    assert text.stdout.splitlines()[2].startswith("smollm2  openai  17")
    assert any(line.startswith("smollm2 · openai  composite ") for line in text.stdout.splitlines())
