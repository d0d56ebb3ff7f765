"""The answer checks' building blocks one by one (checks/answers.py, checks/rules.py): exact
values, so a changed operator, bound or message is seen (the statistics engineer mutation-tests
these modules)."""

from __future__ import annotations

import re
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from benchrig.checks.answers import (
    EXTRACT_CHARS,
    contains,
    expected_problems,
    final_answer_problems,
    final_answer_value,
    full_match,
    regex_problems,
    truncation_note,
    value_text,
)
from benchrig.checks.judge import judge
from benchrig.checks.rules import (
    UNBOUNDED_GAP,
    accepted_patterns,
    compile_pattern,
    pattern_misses,
)
from benchrig.core.settings import Settings
from benchrig.core.transcript import Transcript
from benchrig.spec import load_task
from tests.conftest import TASKS


@pytest.mark.parametrize("pattern", [".*", ".+", ".*?", ".+?", ".{2,}", ".{,}", "a.*b",
                                     "(?:x).{10,}"])
def test_an_unbounded_gap_is_seen(pattern: str) -> None:
    assert UNBOUNDED_GAP.search(pattern)


@pytest.mark.parametrize("pattern", [r"\.*", r"\.+", ".{0,3}", ".{2}", "(?:\\w+ ){0,4}",
                                     "a.b", "[.]*"])
def test_a_bounded_gap_or_a_literal_dot_is_not(pattern: str) -> None:
    assert UNBOUNDED_GAP.search(pattern) is None


def test_accepted_patterns_are_the_accept_list_else_the_escaped_expected_answer() -> None:
    assert accepted_patterns({"accept": ["a+", "b"]}, "x") == ["a+", "b"]
    assert accepted_patterns({}, "1/6") == [re.escape("1/6")]
    assert accepted_patterns({"accept": []}, "A is a knave.") == [re.escape("A is a knave")]


def test_pattern_misses_numbers_the_missing_patterns_from_one() -> None:
    assert pattern_misses(["a", "b", "c"], None, "c a") == [2]
    assert pattern_misses(["a", "b"], None, "A B") == []  # case ignored
    assert pattern_misses(["x"], None, "") == [1]


def test_a_subject_pattern_must_match_where_its_subject_is_stated_last() -> None:
    patterns, subjects = [r"box 1 oranges"], [r"box 1"]
    assert pattern_misses(patterns, subjects, "box 1 oranges") == []
    assert pattern_misses(patterns, subjects, "box 1 oranges then box 1 apples") == [1]
    assert pattern_misses(patterns, subjects, "box 1 apples then box 1 oranges") == []
    assert pattern_misses(patterns, subjects, "oranges") == [1]  # subject never stated
    # matched at the last subject's start, not anywhere after it
    assert pattern_misses(patterns, subjects, "box 1 is full: box 1 oranges x") == []
    assert pattern_misses(patterns, subjects, "box 1 holds: x box 1 oranges") == []
    assert pattern_misses(patterns, subjects, "box 1 oranges, box 1: x oranges") == [1]


def test_compile_pattern_reports_the_field_and_returns_none() -> None:
    problems: list[str] = []
    assert compile_pattern("a(", "check.patterns[0]", problems) is None
    assert len(problems) == 1 and problems[0].startswith("check.patterns[0]: 'a(' is not a "
                                                         "valid regular expression (")
    compiled = compile_pattern("Abc", "f", problems)
    assert compiled is not None and compiled.search("xabcx") and len(problems) == 1


@pytest.mark.parametrize(("text", "value"), [
    ("**114.6**.", "114.6"), ("  $\\boxed{1/6}$ ", "1/6"), ("11:20 a.m!", "11:20 a.m"),
    ("done;", "done"), ("x ,", "x"), ("Oslo。", "Oslo")])
def test_value_text_drops_markup_and_trailing_punctuation(text: str, value: str) -> None:
    assert value_text(text) == value


@pytest.mark.parametrize(("answer", "value"), [
    ("Final answer: 5", "5"), ("final answer: 5.\nFinal Answer: 7", "7"),
    ("Final answer:\n\n  42  \nmore", "42"), ("FINAL ANSWER： 3", "3"),
    ("Final   answer :9", "9"), ("The answer is 5", None), ("Final answer:", ""),
])
def test_final_answer_value_is_the_last_marker_line(answer: str, value: str | None) -> None:
    assert final_answer_value(answer) == value


def test_full_match_needs_the_whole_normalized_text() -> None:
    assert full_match(["11:20"], "11:20.") == "11:20"
    assert full_match(["11:20"], "at 11:20") is None
    assert full_match(["a", "b"], "B") == "b"
    assert full_match(["x"], "X") == "x"  # case ignored


@pytest.mark.parametrize(("expected", "text", "found"), [
    ("114.6", "pays 114.60 now", True), ("114.6", "pays 1114.60", False),
    ("1/6", "p is 1/6", True), ("1/6", "p is 11/60", False),
    ("Oranges", "box: oranges.", True), ("Oranges", "box: bloodoranges", False),
    ("A is a knave", "so a is a knave here", True), ("knave", "knaves", False),
])
def test_contains_reads_numbers_by_value_and_words_whole(expected: str, text: str,
                                                         found: bool) -> None:
    assert contains(expected, text) is found


def test_the_truncation_note_names_the_limit_and_keeps_the_reason() -> None:
    assert truncation_note(Settings(max_tokens=77), "why") == (
        "Response truncated at num_predict=77 before the answer was complete; why")


def test_validators_name_the_field() -> None:
    assert expected_problems({"check": {"type": "regex"}}) == [
        "expected: a regex check needs the expected answer (a quoted string)"]
    assert expected_problems({"check": {"type": "regex"}, "expected": "x"}) == []
    bad = final_answer_problems({"check": {"type": "final_answer", "accept": ["5 ?cents"]},
                                 "expected": "10"})
    assert bad and bad[0].startswith("check.accept: no pattern accepts the expected answer")
    assert final_answer_problems({"check": {"type": "final_answer"}, "expected": "5"}) == []
    gaps = regex_problems({"check": {"type": "regex", "patterns": ["a.*b"]},
                           "expected": "a b"})
    assert any("unbounded gap" in p for p in gaps)
    missing = regex_problems({"check": {"type": "regex", "patterns": ["zzz"]},
                              "expected": "a b"})
    assert missing and "does not match pattern 1" in missing[0]


def scored(task_id: str, answer: str, **changes: Any) -> Any:
    task = load_task(TASKS / f"{task_id}.md")
    if changes:
        task = replace(task, frontmatter=MappingProxyType({**task.frontmatter, **changes}))
    return judge(task, Transcript(answer=answer, finish_reason="stop"), Settings())


def test_the_evidence_records_what_was_scored_capped() -> None:
    long = "x " * 400 + "Final answer: 5"
    v = scored("bat-and-ball", long)
    assert v.evidence["answer_chars"] == len(long) and v.evidence["extracted"] == "5"
    v = scored("mislabeled-boxes", "word " * 200)
    assert len(v.evidence["extracted"]) <= EXTRACT_CHARS
    v = scored("discount-tax", "114.6")
    assert v.evidence["matched"] == "evaluator:numeric" and v.evidence["evaluator"] == "numeric"
    assert scored("discount-tax", "114.6", evaluator=None).evidence["matched"] == "exact"
    v = scored("discount-tax", "It is 114.60 in total.")
    assert v.result == "pass" and v.evidence["evaluator_decided"] is False
    assert v.evidence["matched"] == "conclusion"


def test_the_evaluator_decides_only_when_both_sides_are_numbers() -> None:
    assert scored("discount-tax", "114.600").result == "pass"  # numeric: exact value
    v = scored("discount-tax", "114.61")
    assert v.result == "fail" and v.evidence["evaluator_decided"] is True
    assert "numeric: 114.61 is not 114.6" in v.notes
    assert scored("discount-tax", "114.600", evaluator=None).result == "pass"  # by the rule


def test_the_conclusion_messages_say_what_was_concluded() -> None:
    v = scored("set-probability", "The answer is 1/6 or maybe 7.")
    assert v.notes == ("the answer concludes '1/6' but offers '7' as another candidate: a "
                       "hedged answer is not an answer")
    v = scored("set-probability", "So the answer is 11/60.")
    assert v.notes.startswith("the answer concludes '11/60' (stated after 'answer is'), "
                              "not '1/6'")
    assert scored("set-probability", "No numbers here.").notes == (
        "the answer states no number (expected '1/6')")
    v = scored("set-probability", "Working.\nFinal answer: 1/6")
    assert v.notes.startswith("the final answer line concludes '1/6'")


@pytest.mark.parametrize(("text", "strengths"), [
    ("It is 114.6.", ["strong"]), ("about 16.67% of them", ["weak"]),
    ("95.5 × 1.2 = 114.6", ["weak", "weak", "strong"]), ("110.5 - 15 = 95.5", ["weak"] * 2
                                                          + ["strong"]),
    ("it includes 19.10 of tax", ["weak"]), ("1/6 (5 out of 30)", ["strong", "weak", "weak"]),
    ("not 11/60", ["rejected"]), ("rather than 120", ["rejected"]), ("≈ 0.167", ["weak"]),
    ("(or perhaps 120)", ["strong"]), ("(I am not sure, it might be 120)", ["strong"]),
    ("16.7 percent", ["weak"]),
])
def test_how_each_number_is_stated(text: str, strengths: list[str]) -> None:
    from benchrig.checks.conclusion import mentions

    assert [m.strength for m in mentions(text)] == strengths


def test_a_percentage_is_a_value_when_the_expected_answer_is_one() -> None:
    from benchrig.checks.conclusion import conclude, mentions

    assert [m.strength for m in mentions("It is 25%.", percent_is_value=True)] == ["strong"]
    found = conclude("The share is 25%.", percent_is_value=True)
    assert found.stated is not None and found.stated.shown == "25"


@pytest.mark.parametrize(("text", "value"), [
    ("42", 42), (" 42.0 ", 42), ("1/6", "1/6"), ("-1.5e3", -1500), ("1e400", 10**400),
    ("1e401", None), ("1e-401", None), ("9" * 100, int("9" * 100)), ("9" * 101, None),
    ("forty", None), ("1/0", None), ("", None), ("1" * 50 + "/" + "7" * 51, None)])
def test_exact_number_is_bounded(text: str, value: Any) -> None:
    from fractions import Fraction

    from benchrig.checks.normalize import exact_number

    assert exact_number(text) == (None if value is None else Fraction(value))


@pytest.mark.parametrize("answer", ["The answer is 5. " * 50_000, "1 2 3 4 5 6 7 8 9 " * 20_000,
                                    "5\n" * 50_000, "The answer is 5, wait 6, " * 40_000,
                                    "1 × " * 80_000])
def test_a_conclusion_reads_a_bounded_number_of_values(answer: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # each number read costs a few regex searches: reading all of 100,000 (and each against
    # every cue) took minutes; the statement, the end and the neighbours bound it
    from benchrig.checks import conclusion

    read: list[int] = []
    original = conclusion._strength

    def counting(*args: Any) -> Any:
        read.append(1)
        return original(*args)

    monkeypatch.setattr(conclusion, "_strength", counting)
    conclusion.conclude(answer)
    assert len(read) <= 3 * conclusion.READ_MENTIONS


def test_a_no_call_answer_reads_a_bounded_clause_per_match(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from benchrig.checks import tool_turn as toolcalls

    sizes: list[int] = []
    pattern = toolcalls._CLAUSE_END

    class Counting:
        def split(self, text: str) -> list[str]:
            sizes.append(len(text))
            return pattern.split(text)

    monkeypatch.setattr(toolcalls, "_CLAUSE_END", Counting())
    assert toolcalls.answer_misses("not snow " * 50_000, [r"\bsnow\b"]) != []
    assert max(sizes, default=0) <= toolcalls.SENTENCE_REACH
