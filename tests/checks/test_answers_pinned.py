"""The answer checks pinned through `judge` and their validators: the truncated flag in each
direction, what the evidence keeps, word answers read as whole words in the conclusion, an
exact answer, and the pattern rules of `checks/rules.py` (numbering, subjects, compile
errors). Behaviour only: each test is an answer a model could give, or a task file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig.checks import check_problems
from benchrig.checks.judge import judge
from benchrig.checks.rules import accepted_patterns, compile_pattern, pattern_misses
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import Verdict
from benchrig.spec import load_task
from tests.conftest import TASKS

HEAD = """---
id: t
suite: reasoning
language: en
difficulty: easy
tags: [demo]
timeout_s: 10
"""
PADDING = "I go over every step of the working once more before I conclude. " * 6
LIMIT = 256


def made(tmp_path: Path, frontmatter: str) -> TaskSpec:
    path = tmp_path / "t.md"
    path.write_text(f"{HEAD}{frontmatter}---\n\nWhat is it?\n", encoding="utf-8")
    return load_task(path)


def bundled(task_id: str) -> TaskSpec:
    return load_task(TASKS / f"{task_id}.md")


def verdict(task: TaskSpec, answer: str, finish: str | None = "stop",
            thinking: str = "") -> Verdict:
    return judge(task, Transcript(answer=answer, thinking=thinking, finish_reason=finish),
                 Settings(max_tokens=LIMIT))


# one right and one wrong answer for each kind of answer check
KINDS = [("two-trains", "Final answer: 11:20", "Final answer: 11:28"),
         ("set-probability", "The probability is 1/6.", "The probability is 11/60."),
         ("mislabeled-boxes", "Box 1: Oranges, Box 2: Apples and Oranges, Box 3: Apples",
          "Box 1: Apples and Oranges, Box 2: Apples, Box 3: Oranges")]


@pytest.mark.parametrize(("task_id", "right", "wrong"), KINDS)
def test_a_wrong_answer_cut_off_by_the_token_limit_is_flagged_truncated(
        task_id: str, right: str, wrong: str) -> None:
    cut = verdict(bundled(task_id), wrong, finish="length")
    assert cut.result == "fail" and cut.truncated and not cut.truncated_thinking
    assert cut.notes.startswith(f"Response truncated at num_predict={LIMIT} before the "
                                "answer was complete; ")
    # a normal stop: a plain failure, not a truncation
    stopped = verdict(bundled(task_id), wrong)
    assert stopped.result == "fail" and not stopped.truncated
    assert not stopped.notes.startswith("Response truncated")
    # right although the limit was hit: a pass, and nothing to excuse
    lucky = verdict(bundled(task_id), right, finish="length")
    assert lucky.result == "pass" and not lucky.truncated
    assert not lucky.notes.startswith("Response truncated")


@pytest.mark.parametrize(("task_id", "right", "wrong"), KINDS)
def test_the_verdict_has_one_detail_and_evidence_of_what_was_read(
        task_id: str, right: str, wrong: str) -> None:
    for answer, passed in ((right, True), (wrong, False)):
        found = verdict(bundled(task_id), f"<think>hmm</think>{answer}")
        kind = bundled(task_id).check_type
        assert [(d.name, d.passed, d.duration_s) for d in found.details] == [
            (kind, passed, 0.0)]
        assert found.notes == found.details[0].message
        assert found.evidence["check"] == kind
        assert found.evidence["answer_chars"] == len(answer)  # after </think>
        assert found.evidence["extracted"]


def test_the_evidence_keeps_the_end_of_a_long_extract() -> None:
    value = "1" * 100 + " " + "2" * 400
    found = verdict(bundled("two-trains"), f"Final answer: {value}")
    assert found.result == "fail"
    assert found.evidence["extracted"] == value[-300:]
    assert found.evidence["matched"] is None
    assert found.evidence["evaluator_decided"] is False


def test_no_marker_is_no_final_answer_and_no_evaluator_decision() -> None:
    found = verdict(bundled("distinct-digit-fives"), "I count 952 of them.")
    assert found.result == "fail" and "no 'Final answer:' line" in found.notes
    assert found.evidence["extracted"] is None
    assert found.evidence["evaluator_decided"] is False


def test_the_final_answer_on_the_line_after_a_bare_marker() -> None:
    task = bundled("linear-recurrence")
    assert verdict(task, "Final answer:\n\n   \n1025\nThat is all.").result == "pass"
    assert verdict(task, "Final answer:\n\n1024\n1025").result == "fail"
    assert verdict(task, "Final answer:").result == "fail"


def test_an_exact_answer_passes_as_exact(tmp_path: Path) -> None:
    task = made(tmp_path, 'expected: "Paris"\ncheck:\n  type: exact_or_contains\n')
    found = verdict(task, "**Paris.**")
    assert found.result == "pass" and found.evidence["matched"] == "exact"
    assert verdict(task, "paris").result == "pass"


def test_a_word_answer_is_read_as_a_whole_word_in_the_conclusion(tmp_path: Path) -> None:
    task = made(tmp_path, 'expected: "Paris"\ncheck:\n  type: exact_or_contains\n')
    assert verdict(task, f"{PADDING}So the capital is Paris, as expected.").result == "pass"
    for wrong in ("So the capital is Parisville.", "So the capital is Lyon.",
                  "So it is Lyonparis."):
        assert verdict(task, f"{PADDING}{wrong}").result == "fail", wrong
    # right only early, then working, then another answer: not the conclusion
    assert verdict(task, f"Paris? {PADDING}{PADDING}No: the capital is Lyon.").result == "fail"
    # a marker line, when there is one, is the conclusion
    assert verdict(task, "It is Paris.\nFinal answer: Lyon").result == "fail"
    assert verdict(task, "It is Lyon.\nFinal answer: Paris").result == "pass"


def test_a_number_with_a_marker_is_read_on_the_marker_line() -> None:
    task = bundled("set-probability")
    assert verdict(task, "The working gives 11/60 at first.\nFinal answer: 1/6").result == "pass"
    assert verdict(task, "So it is 1/6.\nFinal answer: 1/5").result == "fail"


def test_the_hedge_names_the_other_candidate_on_either_side() -> None:
    task = bundled("set-probability")
    first = verdict(task, "The answer is 1/6 or maybe 1/5.")
    second = verdict(task, "The answer is 1/5 or maybe 1/6.")
    assert first.result == second.result == "fail"
    assert "concludes '1/6' but offers '1/5'" in first.notes
    assert "concludes '1/5' but offers '1/6'" in second.notes
    # the same number twice is not two candidates; a percentage is a restatement
    assert verdict(task, "The answer is 1/6 or 1/6.").result == "pass"
    assert verdict(task, "The answer is 16.7% or 1/6.").result == "pass"


def test_a_response_that_ends_inside_thinking_says_why() -> None:
    task = bundled("bat-and-ball")
    stopped = verdict(task, "<think>Final answer: 5", finish="stop")
    assert stopped.notes == "the response ended inside <think>: no answer"
    assert [d.passed for d in stopped.details] == [False]
    assert stopped.evidence == {"check": "final_answer", "extracted": None}


# ---- rules.py through its public functions ---------------------------------------------------

def test_accepted_patterns_are_the_accept_list_or_the_expected_answer() -> None:
    assert accepted_patterns({"accept": ["a+", "b"]}, "x") == ["a+", "b"]
    assert accepted_patterns({}, "1.5") == [r"1\.5"]
    assert accepted_patterns({"accept": []}, "42") == ["42"]


def test_pattern_misses_are_numbered_from_one() -> None:
    assert pattern_misses([r"\bone\b", r"\btwo\b", r"\bthree\b"], None, "ONE and three") == [2]
    assert pattern_misses(["x", "y"], None, "none here") == [1, 2]
    assert pattern_misses([], None, "anything") == []


def test_a_pattern_with_a_subject_must_hold_where_the_subject_is_stated_last() -> None:
    patterns, subjects = [r"box 1 oranges", r"box 2 apples"], ["box 1", "box 2"]
    assert pattern_misses(patterns, subjects, "box 1 oranges box 2 apples") == []
    # box 1 restated wrongly later: its last statement counts
    assert pattern_misses(patterns, subjects, "box 1 oranges box 2 apples box 1 pears") == [1]
    # a subject never stated misses, whatever else matches
    assert pattern_misses(patterns, subjects, "box 1 oranges and apples") == [2]
    # the pattern must start where the subject does, not anywhere after it
    assert pattern_misses([r"oranges"], ["box 1"], "box 1 holds oranges") == [1]
    assert pattern_misses([r"box 1 (?:holds )?oranges"], ["box 1"], "Box 1 holds Oranges") == []


def test_compile_pattern_says_which_field_does_not_compile() -> None:
    problems: list[str] = []
    assert compile_pattern("a(b", "check.patterns[3]", problems) is None
    assert len(problems) == 1
    assert problems[0].startswith("check.patterns[3]: 'a(b' is not a valid regular expression (")
    compiled = compile_pattern("ABC", "f", problems)
    assert compiled is not None and compiled.search("xabcx") and len(problems) == 1


def test_validators_check_every_pattern_and_subject() -> None:
    meta: dict[str, Any] = {"expected": "Box 1: Oranges, Box 2: Apples",
            "check": {"type": "regex", "patterns": [r"\bbox 1 oranges\b", r"\bbox 2 apples\b"],
                      "subjects": [r"\bbox 1\b", r"\bbox 2\b"]}}
    assert check_problems(meta) == []
    meta["check"]["patterns"] = [r"\bbox 1 oranges\b", r"box 2 .+"]
    found = check_problems(meta)
    assert found == [r"check.patterns[1]: 'box 2 .+' has an unbounded gap (.* or .+); use a "
                     r"bounded one such as (?:\w+ ){0,3}"]
    meta["check"]["patterns"] = [r"\bbox 1 oranges\b", r"\bbox 2 pears\b"]
    assert check_problems(meta) == [
        "check.patterns: the expected answer 'Box 1: Oranges, Box 2: Apples' does not match "
        "pattern 2 (where its subject is stated last, when it has one)"]
    meta["check"]["subjects"] = [r"\bbox 1\b", r"box (2"]
    found = check_problems(meta)
    assert len(found) == 1 and found[0].startswith("check.subjects[1]: 'box (2' is not a valid")
    no_subjects = {"expected": "Box 1: Oranges", "check": {
        "type": "regex", "patterns": [r"\bbox 1 oranges\b", r"\bbox 1\b"]}}
    assert check_problems(no_subjects) == []


def test_a_final_answer_validator_reports_every_broken_pattern() -> None:
    meta: dict[str, Any] = {"expected": "42", "check": {
        "type": "final_answer", "accept": ["4[2", "42", "(x"]}}
    found = check_problems(meta)
    assert [p.split(":")[0] for p in found] == ["check.accept[0]", "check.accept[2]"]
    meta["check"]["accept"] = ["42", "forty-two"]
    assert check_problems(meta) == []
    meta["check"]["accept"] = ["forty-two"]
    assert check_problems(meta) == ["check.accept: no pattern accepts the expected answer "
                                    "'42' (patterns see it as '42')"]
    assert check_problems({"expected": 42, "check": {"type": "final_answer"}}) == [
        "expected: a final_answer check needs the expected answer (a quoted string)"]


@pytest.mark.parametrize("kind", ["final_answer", "regex", "exact_or_contains"])
def test_a_validator_reports_a_missing_or_unquoted_answer_instead_of_failing(
        kind: str) -> None:
    """A plugin or a caller may validate a check before the schema has: the validator says
    what is wrong, whatever else the check holds, and never raises."""
    reason = f"expected: a {kind} check needs the expected answer (a quoted string)"
    check: dict[str, Any] = {"type": kind, "patterns": [r"\bx\b"], "accept": ["x"]}
    assert check_problems({"check": check}) == [reason]
    assert check_problems({"expected": 42, "check": check}) == [reason]
    assert check_problems({"expected": None, "check": check}) == [reason]


def test_a_restatement_joined_by_is_is_not_a_hedge() -> None:
    """"0.167 is 1/6 rounded" states one value twice; only an alternative word ("or",
    "maybe" …) between two numbers offers a second candidate."""
    task = bundled("set-probability")
    for answer in ("The probability: 0.167 is 1/6 rounded.", "Out of 30, it is 1/6.",
                   "So P = 5/30, it is 1/6.", "Neither: 5 of 30, that is also 1/6."):
        assert verdict(task, answer).result == "pass", answer
    assert verdict(task, "So P is 1/6, it is maybe 1/5.").result == "fail"


def test_the_notes_say_where_the_answer_was_looked_for() -> None:
    task = bundled("set-probability")
    marked = verdict(task, "Final answer: 1/5")
    assert marked.notes == "the final answer line concludes '1/5' (stated on its own), not '1/6'"
    assert verdict(task, "Final answer: 1/6").notes == (
        "the final answer line concludes '1/6' (stated on its own)")
    concluded = verdict(task, "The probability is 1/5.")
    assert concluded.notes == "the answer concludes '1/5' (the last value stated), not '1/6'"
    stated = verdict(task, "The answer is 1/6 or 1/6.")
    assert stated.notes == "the answer concludes '1/6' (stated after 'answer is')"


# ---- what the merged conclusion reader left to pin (the mutation run's survivors) ----------


def test_a_numeric_answer_with_no_number_says_so() -> None:
    task = bundled("set-probability")
    marked = verdict(task, "I could not work it out.")
    assert marked.result == "fail"
    assert marked.notes == "the answer states no number (expected '1/6')"


def test_contains_reads_a_number_by_its_whole_value() -> None:
    from benchrig.checks.answers import contains

    assert contains("1/6", "the odds are 1/6 overall")
    assert contains("114.6", "a total of $114.60")
    assert not contains("1/6", "the odds are 11/60")
    assert not contains("114.6", "a total of 1114.60")
    assert contains("Paris", "It is Paris.") and not contains("Paris", "Parisian")


def test_a_word_answer_is_read_on_the_final_answer_line_when_there_is_one() -> None:
    import dataclasses

    base = bundled("set-probability")
    task = dataclasses.replace(base, frontmatter={**base.frontmatter, "expected": "Paris"})
    lined = verdict(task, "Lyon is large.\nFinal answer: Paris")
    assert (lined.result, lined.notes) == ("pass", "the final answer line contains 'Paris'")
    missed = verdict(task, "Paris is lovely.\nFinal answer: Lyon")
    assert (missed.result, missed.notes) == (
        "fail", "the final answer line does not contain 'Paris'")
    tail = verdict(task, "It is Paris.")
    assert tail.result == "pass" and tail.notes.endswith("characters contain 'Paris'")
