"""Every answer-scored suite end to end on the embedded model (llamacpp): results validate,
the rules leave their evidence, and the summary renders. Budgets are small to stay fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Ran, benchrig, cli_call
from tests.helpers.results import valid_results

pytestmark = pytest.mark.model

SUITES = ("reasoning", "speed", "polish")
MAX_TOKENS = "32"
# One thread: the test machines are shared, and two llama.cpp threads waiting on each other
# on two busy cores run several times slower than one.
THREADS = ("--threads", "1")



@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ran, Path]:
    folder = tmp_path_factory.mktemp("results")
    args = [a for s in SUITES for a in ("--suite", s)]
    done = benchrig("run", *args, "--model", "smollm2", "--max-tokens", MAX_TOKENS, *THREADS,
                    results_dir=folder)
    return done, folder


def test_every_suite_runs_and_every_result_validates(ran: tuple[Ran, Path]) -> None:
    done, folder = ran
    results = valid_results(folder)
    assert done.code in (0, 1), done.stderr
    assert {r["suite"] for r in results} == set(SUITES)
    assert len(results) == 12 + 2 + 3
    assert all(r["result"] != "error" for r in results), [r["notes"] for r in results]
    assert all(r["settings"]["max_tokens"] == int(MAX_TOKENS) for r in results)
    assert "[17/17]" in done.stderr and "generating" in done.stderr  # progress → stderr
    assert "generating" not in done.stdout


def test_answer_rules_leave_their_evidence(ran: tuple[Ran, Path]) -> None:
    _, folder = ran
    for r in valid_results(folder):
        if r["suite"] == "speed":
            continue
        sidecar = folder / r["transcript_file"]
        answer = [json.loads(line) for line in sidecar.read_text().splitlines()][-1]["text"]
        assert r["answer_excerpt"] == answer[-400:]
        assert r["evidence"]["check"] in ("final_answer", "regex", "exact_or_contains",
                                          "declension", "choices", "summary")
        assert r["result"] in ("pass", "fail")
        if r["truncated"]:  # only a response cut off at the limit can be truncated
            assert r["finish_reason"] == "length" and r["result"] == "fail"
        assert r["truncated_thinking"] is False  # SmolLM2 does not think
        m = r["metrics"]
        assert m["thinking_tokens"] == 0 and m["thinking_tokens_source"] == "counted"
        assert r["checks"]["total"] == {"polish-declension": 7, "polish-idioms": 5,
                                        "polish-summary": 5}.get(r["task"], 1)


def test_speed_measures_with_thinking_off_and_no_truncation(ran: tuple[Ran, Path]) -> None:
    _, folder = ran
    speed = [r for r in valid_results(folder) if r["suite"] == "speed"]
    assert {r["task"] for r in speed} == {"speed-short-decode", "speed-sustained-512"}
    for r in speed:
        m = r["metrics"]
        assert r["result"] == "no-test" and r["truncated"] is False
        assert r["finish_reason"] in ("stop", "length")
        # asked off; llama.cpp has no switch, so nothing was sent
        assert (r["settings"]["think_requested"], r["settings"]["think"]) == (False, None)
        assert m["tokens_per_s"] > 0 and m["prefill_tokens_per_s"] > 0 and m["ttft_ms"] > 0
        assert m["output_tokens"] <= int(MAX_TOKENS)


def test_the_summary_renders_the_scorecards(ran: tuple[Ran, Path]) -> None:
    _, folder = ran
    text = cli_call("summary", str(folder), results_dir=folder)
    assert text.code == 0 and text.stderr == ""
    lines = text.stdout.splitlines()
    assert lines[0].split()[:3] == ["model", "agent", "attempts"]
    assert lines[2].startswith("smollm2  llamacpp  17")
    assert any(line.startswith("smollm2 · llamacpp  composite ") for line in lines)
    for fragment in ("  reasoning  ", "  polish  ", "speed-short-decode", "speed-sustained-512",
                     "(mean of reasoning, polish)"):
        assert fragment in text.stdout, fragment
    md = cli_call("summary", "-f", "markdown", str(folder), results_dir=folder)
    assert "### smollm2 · llamacpp" in md.stdout
    csv = cli_call("summary", "-f", "csv", str(folder), results_dir=folder)
    header, row = csv.stdout.splitlines()
    assert "reasoning_pass_rate" in header and "speed_eval_tok_sec" in header
    assert row.startswith("smollm2,llamacpp,17,")


def test_runs_give_an_interval(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    done = benchrig("run", "bat-and-ball", "letters-in-strawberry", "--runs", "2",
                    "--max-tokens", "24", *THREADS, results_dir=folder)
    assert done.code in (0, 1), done.stderr
    results = valid_results(folder)
    assert sorted(r["task"] for r in results) == ["bat-and-ball"] * 2 + [
        "letters-in-strawberry"] * 2
    text = cli_call("summary", str(folder), results_dir=folder).stdout
    assert "min-max over up to 2 runs" in text
    line = next(x for x in text.splitlines() if x.startswith("  reasoning  "))
    assert "% [" in line and "] (" in line  # e.g. "reasoning  0.0% [0.0-0.0] (0/4)"
