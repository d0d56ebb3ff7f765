"""Every bundled tool case passes with its oracle transcript and fails with each near miss
written for it, through the whole attempt (replay driver → conversation → check → result)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers.replay import ReplayDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.toolcases import CASES, all_near_misses, meta, oracle, write


def attempt(case: str, transcript: dict[str, Any], folder: Path) -> dict[str, Any]:
    task = load_task(TASKS / f"{case}.md")
    replay = write(folder / "transcript.json", transcript)
    return run_attempt(task, "oracle", ReplayDriver(), str(replay),
                       settings_for(task, Overrides()), folder).result


def test_eighteen_cases_cover_what_the_specification_lists() -> None:
    assert len(CASES) == 18
    tags = [set(meta(c)["tags"]) for c in CASES]
    for kind in ("selection", "integer", "enum", "array", "no-call", "two-step", "polish",
                 "retrieval"):
        assert any(kind in t for t in tags), kind
    assert all(len(meta(c)["tools"]) >= 2 for c in CASES)  # always a choice of tools


@pytest.mark.parametrize("case", CASES)
def test_the_oracle_passes(case: str, tmp_path: Path) -> None:
    result = attempt(case, oracle(case), tmp_path)
    assert result["result"] == "pass", result["notes"]
    counts = result["evidence"]["tool_use"]["counts"]
    planned = meta(case)["turns"]
    assert counts["passed_turns"] == len(planned) and counts["skipped_turns"] == 0
    for turn, evidence in zip(planned, result["evidence"]["tool_use"]["turns"], strict=True):
        assert evidence["verdict"] == "pass"
        assert evidence["request_messages"][-1]["role"] in ("user", "tool")
        if "call" in turn:
            assert evidence["arguments"] and evidence["structured"]


NEAR_MISSES = all_near_misses()


@pytest.mark.parametrize(("case", "miss", "transcript", "words"), NEAR_MISSES,
                         ids=[f"{c}-{n}" for c, n, _, _ in NEAR_MISSES])
def test_each_near_miss_fails(case: str, miss: str, transcript: dict[str, Any], words: str,
                              tmp_path: Path) -> None:
    result = attempt(case, transcript, tmp_path)
    assert result["result"] == "fail"
    turns = result["evidence"]["tool_use"]["turns"]
    wrong = int(miss.split("-")[0].removeprefix("turn")) - 1
    assert [t["verdict"] for t in turns[:wrong]] == ["pass"] * wrong
    assert turns[wrong]["verdict"] == "fail" and words in turns[wrong]["reason"]
    # the first wrong turn ends the conversation: later turns were never sent, and fail
    assert all(t["verdict"] == "skipped" and t["reply"] is None for t in turns[wrong + 1:])
    assert result["checks"]["total"] == len(turns)
    assert result["checks"]["passed"] == wrong


def test_a_right_first_step_then_a_wrong_second(tmp_path: Path) -> None:
    transcript = oracle("tool-twostep-order")
    transcript["turns"][1]["tool_calls"][0]["arguments"] = '{"tracking_id": "A-1234"}'
    result = attempt("tool-twostep-order", transcript, tmp_path)
    first, second = result["evidence"]["tool_use"]["turns"]
    assert first["verdict"] == "pass" and second["verdict"] == "fail"
    # the fixture result of the first call was fed back before the second request
    fed = second["request_messages"][-1]
    assert fed["role"] == "tool" and "TRK-5521" in fed["content"]
    assert second["request_messages"][-2]["tool_calls"][0]["function"]["name"] == \
        "lookup_order"


def test_the_suite_is_opt_in() -> None:
    from benchrig.cli import _load

    assert not [t for t in _load([], []) if t.suite == "tool_use"]
    assert len(_load([], ["tool_use"])) == 18
    assert [t.id for t in _load(["tool-select-weather"], [])] == ["tool-select-weather"]


@pytest.mark.parametrize("text", ["No, it is not snowing in Oslo.",
                                  "I don't know if it's snowing."])
def test_a_negation_or_a_non_answer_fails_the_weather_answer(text: str, tmp_path: Path) -> None:
    transcript = oracle("tool-twostep-weather-answer")
    transcript["turns"][1]["text"] = text
    result = attempt("tool-twostep-weather-answer", transcript, tmp_path)
    assert result["result"] == "fail", result["notes"]
    assert result["evidence"]["tool_use"]["counts"]["abstention"] == 0


QUOTES = [('"', '"'), ("“", "”"), ("„", "”"), ("'", "'"), ("«", "»"), ("`", "`")]


def phrases(value: Any, schema: Any) -> list[str]:
    """The free-text strings of more than one word in expected arguments (enum values are the
    schema's own: a model picks them, it does not phrase them)."""
    if isinstance(value, dict):
        props = (schema or {}).get("properties") or {}
        return [p for k, v in value.items() for p in phrases(v, props.get(k))]
    if isinstance(value, list):
        return [p for v in value for p in phrases(v, (schema or {}).get("items"))]
    if isinstance(value, str) and " " in value.strip() and "enum" not in (schema or {}):
        return [value]
    return []


@pytest.mark.parametrize("case", CASES)
def test_a_case_demands_only_phrases_the_model_is_given(case: str) -> None:
    """A call's multi-word text must be quoted in the request (or come from an earlier
    fixture result): an unquoted request ("find our vacation policy") leaves the exact
    query to the model's taste, and a correct model must be able to pass."""
    task = load_task(TASKS / f"{case}.md")
    m = meta(case)
    schemas = {t["function"]["name"]: t["function"].get("parameters") for t in m["tools"]}
    told = [task.body]
    for turn in m["turns"]:
        told.append(str(turn.get("user") or ""))
        call = turn.get("call")
        if call is not None:
            for phrase in phrases(call.get("arguments") or {}, schemas[call["name"]]):
                quoted = any(f"{a}{phrase}{b}" in text for text in told for a, b in QUOTES)
                assert quoted, f"{case}: {phrase!r} is not quoted in the request"
        # an earlier fixture result is given too (JSON quotes its strings)
        told.append(json.dumps(turn.get("result"), ensure_ascii=False))
