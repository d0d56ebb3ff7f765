"""Attacks on the answer checks' readers: a model's text that used to crash a check (and so
leave the pass rate as `error/harness`) now fails that check, counted, with the reason."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import counts_against_model
from benchrig.drivers.replay import ReplayDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.toolcases import call_json, oracle, write


def attempt(task_id: str, answer: str | dict[str, Any], folder: Path) -> dict[str, Any]:
    """One whole attempt (replay → check → result file) of a bundled task."""
    task = load_task(TASKS / f"{task_id}.md")
    if isinstance(answer, dict):
        replay = write(folder / "transcript.json", answer)
    else:
        replay = folder / "answer.md"
        replay.write_text(answer, encoding="utf-8")
    return run_attempt(task, "attacker", ReplayDriver(), str(replay),
                       settings_for(task, Overrides()), folder).result


def assert_counted_failure(result: dict[str, Any], words: str) -> None:
    assert result["result"] == "fail", (result["result"], result["notes"])
    assert result["error"] is None and counts_against_model(result)
    assert result["checks"]["total"] >= 1 and result["checks"]["passed"] == 0
    assert words in result["notes"], result["notes"]


def test_a_number_past_python_s_digit_limit_is_a_failed_check(tmp_path: Path) -> None:
    # Fraction("9" * 5000) raises ValueError (int max str digits): it was error/harness
    answer = "The customer pays $" + "9" * 5000 + ". Or 114.6."
    result = attempt("discount-tax", answer, tmp_path)
    assert result["result"] == "fail" and result["error"] is None


def test_a_huge_decimal_in_the_final_answer_line_is_a_failed_check(tmp_path: Path) -> None:
    result = attempt("discount-tax", "Final answer: 0." + "5" * 5000, tmp_path)
    assert result["result"] == "fail" and result["error"] is None


@pytest.mark.parametrize("value", ["1e999999999", "1E+999999999", "5e-999999999",
                                   "1_0e99999_9999", "1e400"])
def test_an_exponent_bomb_is_refused_before_fraction_sees_it(value: str, tmp_path: Path
                                                            ) -> None:
    began = time.process_time()  # CPU, not wall: a busy machine cannot fail it (issue 23)
    result = attempt("bat-and-ball", f"Final answer: {value}", tmp_path)
    assert result["result"] == "fail" and result["error"] is None
    assert time.process_time() - began < 5  # bounded: it used to compute 10**999999999


def test_a_right_answer_in_scientific_notation_still_passes(tmp_path: Path) -> None:
    assert attempt("bat-and-ball", "Final answer: 5e0", tmp_path)["result"] == "pass"


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": [value]}
    return value


def test_tool_arguments_nested_500_deep_fail_the_turn(tmp_path: Path) -> None:
    transcript = oracle("tool-select-weather")
    call = transcript["turns"][0]["tool_calls"][0]
    name = call["name"]
    transcript["turns"][0]["tool_calls"] = [{"name": name, "arguments":
                                             '{"city": ' + "[" * 500 + "]" * 500 + "}"}]
    result = attempt("tool-select-weather", transcript, tmp_path)
    assert_counted_failure(result, "nested deeper than")
    # the same as an object (Ollama sends one)
    transcript["turns"][0]["tool_calls"] = [call_json(name, {"city": deep(250)}, text=False)]
    result = attempt("tool-select-weather", transcript, tmp_path)
    assert_counted_failure(result, "nested deeper than")


class HugeNumbers:
    """A runtime whose every answer is a number past Python's 4,300-digit limit."""

    name = "huge"
    kind = "runtime"

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: Any) -> Any:
        from benchrig.core.measurements import Metrics
        from benchrig.core.transcript import DriverOutput, Transcript

        return DriverOutput(Transcript(answer="The code is " + "9" * 5000 + ".",
                                       finish_reason="stop"), Metrics())


def test_a_context_window_whose_answer_crashes_the_reader_is_a_counted_failure(
        tmp_path: Path) -> None:
    task = load_task(TASKS / "context-needle.md")
    result = run_attempt(task, "attacker", HugeNumbers(), None,
                         settings_for(task, Overrides()), tmp_path).result
    assert result["result"] == "fail" and result["error"] is None, result["notes"]
    steps = result["evidence"]["context"]["steps"]
    assert steps and all(s["error"] is None and not s["passed"] for s in steps)


def test_the_summary_counts_the_attack_as_a_failure_not_an_error(tmp_path: Path) -> None:
    # measured before: `100% (1/1), 1 error` where the truth is 50%
    from benchrig.report.scorecard import suite_card

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    right = attempt("discount-tax", "The customer pays $114.60.", tmp_path / "a")
    attack = attempt("discount-tax", "Final answer: " + "9" * 5000, tmp_path / "b")
    card = suite_card("reasoning", [right, attack])
    assert (card.passed, card.scored, card.errors) == (1, 2, 0)
