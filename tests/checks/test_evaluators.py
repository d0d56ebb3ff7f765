"""The optional evaluator layer: numeric and numeric_text exactly as documented, the
both-sides-parse invariant, and the structured event for an unknown evaluator."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from benchrig.checks.evaluators import (
    as_fraction,
    as_number_or_words,
    evaluate,
    known_evaluator,
    words_to_number,
)
from tests.conftest import answer_file, cli_call


@pytest.mark.parametrize("answer", ["42", "42.0", " 42 ", "\t42\n", "84/2", "42.000"])
def test_numeric_compares_exact_fractions_after_trimming(answer: str) -> None:
    assert evaluate("numeric", answer, "42").passed is True


def test_numeric_is_exact_not_approximate() -> None:
    assert evaluate("numeric", "0.1667", "1/6").passed is False
    assert evaluate("numeric", "0.5", "1/2").passed is True
    assert evaluate("numeric", "41.999999", "42").passed is False


def test_numeric_does_not_read_words() -> None:
    decision = evaluate("numeric", "forty-two", "42")
    assert decision.passed is None  # only one side parses: no decision, the check decides


@pytest.mark.parametrize(("words", "value"), [
    ("zero", 0), ("seven", 7), ("nineteen", 19), ("twenty", 20), ("forty-two", 42),
    ("twenty-one", 21), ("ninety-nine", 99), ("one hundred", 100),
    ("three hundred forty-five", 345), ("two thousand five hundred", 2500),
    ("one million", 1_000_000), ("twelve thousand three hundred four", 12304),
    ("twenty three", 23),
])
def test_english_number_words(words: str, value: int) -> None:
    assert words_to_number(words) == value


@pytest.mark.parametrize("words", [
    "Forty-Two", "Seven", "TWENTY", "forty two hundred", "hundred", "one and two",
    "twenty-zero", "forty-", "five six", "one thousand one million", "eleventy", "",
])
def test_what_is_not_a_number_in_words(words: str) -> None:
    assert words_to_number(words) is None


def test_numeric_text_is_numeric_plus_words_and_case_sensitive() -> None:
    assert evaluate("numeric_text", "forty-two", "42").passed is True
    assert evaluate("numeric_text", "42.0", "forty-two").passed is True
    assert evaluate("numeric_text", "forty-one", "42").passed is False
    assert evaluate("numeric_text", "Forty-Two", "forty-two").passed is None
    assert evaluate("numeric_text", "Forty-Two", "42").passed is None
    assert as_number_or_words("1/6") == Fraction(1, 6)


def test_the_layer_never_decides_when_one_side_is_a_word_answer() -> None:
    for name in ("numeric", "numeric_text"):
        assert evaluate(name, "Box 1: Oranges", "Box 1: Oranges").passed is None
        assert evaluate(name, "3", "A is a knave").passed is None
        assert evaluate(name, "A is a knave", "3").passed is None
    assert evaluate(None, "42", "42").passed is None
    assert as_fraction("nan") is None and as_fraction("1/0") is None


def test_unknown_evaluator_is_none_and_logs_a_structured_event(
        caplog: pytest.LogCaptureFixture) -> None:
    assert known_evaluator("numerik", "t") is None
    (record,) = caplog.records
    assert record.name == "benchrig.events" and record.levelname == "WARNING"
    event = json.loads(record.getMessage())
    assert event["event"] == "evaluator.unknown"
    assert event["evaluator"] == "numerik" and event["task"] == "t"
    caplog.clear()
    assert known_evaluator("numeric", "t") == "numeric"
    assert known_evaluator(None, "t") is None
    assert caplog.records == []


TASK = """---
id: typo
suite: reasoning
language: en
difficulty: easy
tags: [demo]
timeout_s: 10
expected: "42"
evaluator: numerik
check:
  type: final_answer
---

What is six times seven?
"""


@pytest.mark.slow
def test_a_typo_in_the_evaluator_still_scores_by_the_check_and_says_so(
        tmp_path: Path, results_dir: Path) -> None:
    path = answer_file(tmp_path, TASK, "typo.md")
    right = answer_file(tmp_path, "Final answer: 42")
    ran = cli_call("run", str(path), "-m", "oracle", "-d", "replay", "-p", str(right),
                   results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    events = [json.loads(line) for line in ran.stderr.splitlines() if line.startswith("{")]
    assert [e["event"] for e in events] == ["evaluator.unknown"]
    assert events[0]["evaluator"] == "numerik" and events[0]["task"] == "typo"
    assert "evaluator.unknown" not in ran.stdout  # an event is not data
    # "42.0" would pass under `numeric`; with the evaluator unknown, the check decides
    decimal = answer_file(tmp_path, "Final answer: 42.0", "b.md")
    ran = cli_call("run", str(path), "-m", "oracle", "-d", "replay", "-p", str(decimal),
                   results_dir=results_dir)
    assert ran.code == 1 and "is not an accepted answer" in ran.stdout
