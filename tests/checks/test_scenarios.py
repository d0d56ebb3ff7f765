"""The twelve reasoning scenarios: every expected answer computed again by independent code,
and each check accepts the right answer as models write it and rejects near misses."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import pytest

from benchrig.checks.judge import judge
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import Verdict
from benchrig.spec import load_task, load_tasks, task_paths
from tests.conftest import ROOT, TASKS
from tests.helpers.regex_gaps import unbounded_gaps

# ---------------------------------------------------------------- independent solutions


def discount_tax() -> Fraction:
    price = Fraction(130) * (1 - Fraction(15, 100))  # 15% off the list price
    price -= 15  # then the $15 coupon
    return price * (1 + Fraction(20, 100))  # then 20% tax on what remains


def mislabeled_boxes() -> str:
    labels = {1: "Apples", 2: "Oranges", 3: "Apples and Oranges"}
    found = []
    for contents in itertools.permutations(labels.values()):
        boxes = dict(zip(labels, contents, strict=True))
        every_label_wrong = all(boxes[b] != labels[b] for b in boxes)
        apple_from_box_3 = "Apples" in boxes[3].split(" and ")
        if every_label_wrong and apple_from_box_3:
            found.append(boxes)
    assert len(found) == 1, "the puzzle must have exactly one solution"
    return ", ".join(f"Box {b}: {c}" for b, c in found[0].items())


def set_probability() -> Fraction:
    students = range(30)
    soccer = set(range(18))
    basketball = set(range(13, 25))  # 12 players, 5 of whom (13…17) also play soccer
    assert len(soccer) == 18 and len(basketball) == 12 and len(soccer & basketball) == 5
    neither = [s for s in students if s not in soccer | basketball]
    return Fraction(len(neither), len(students))


def two_trains() -> str:
    # Minute by minute from 9:00: A at 1 km/min from X, B at 1.5 km/min from Y after 10:00.
    for minute in range(24 * 60):
        a_from_x = Fraction(60, 60) * minute
        b_from_x = 260 - Fraction(90, 60) * max(0, minute - 60)
        if a_from_x >= b_from_x:
            assert a_from_x == b_from_x, "they must meet on a whole minute"
            hours, minutes = divmod(9 * 60 + minute, 60)
            return f"{hours}:{minutes:02d}"
    raise AssertionError("the trains never meet")


def knights_and_knaves() -> str:
    statements: dict[str, Callable[[dict[str, bool]], bool]] = {
        "A": lambda s: sum(s.values()) == 1,  # "Exactly one of us three is a knight."
        "B": lambda s: s["A"] != s["B"],  # "A and I are of different kinds."
        "C": lambda s: s["B"] == s["C"],  # "B and I are of the same kind."
    }
    found = []
    for kinds in itertools.product([True, False], repeat=3):
        s = dict(zip("ABC", kinds, strict=True))
        if all(s[p] == says(s) for p, says in statements.items()):  # knights say truths
            found.append(s)
    assert len(found) == 1, "the puzzle must have exactly one solution"
    (s,) = found
    knaves = [p for p in "ABC" if not s[p]]
    knights = [p for p in "ABC" if s[p]]
    assert len(knaves) == 1 and len(knights) == 2
    return f"{knaves[0]} is a knave, {knights[0]} and {knights[1]} are knights"


def distinct_digit_fives() -> int:
    return sum(1 for n in range(1000, 10000) if len(set(str(n))) == 4 and n % 5 == 0)


def linear_recurrence() -> int:
    a = 3
    for _ in range(9):  # a1 → a10
        a = 2 * a - 1
    return a


def chained_percentages() -> Fraction:
    price = Fraction(80)
    for change in (25, -20, 10):
        price *= 1 + Fraction(change, 100)
    return price


def count_letter(text: str, letter: str) -> int:
    return sum(1 for character in text if character == letter)


def bat_and_ball() -> int:
    (ball,) = [c for c in range(111) if c + (c + 100) == 110]  # in cents
    return ball


def multiples_three_five() -> int:
    return sum(1 for n in range(1, 101) if n % 3 == 0 or n % 5 == 0)


# task id → (independently computed answer, facts of the prompt it was computed from)
SCENARIOS: dict[str, tuple[object, tuple[str, ...]]] = {
    "discount-tax": (discount_tax(), ("$130", "15%", "$15", "20%")),
    "mislabeled-boxes": (mislabeled_boxes(), ('Box 1 is labeled "Apples"',
                                              'Box 2 is labeled "Oranges"',
                                              'Box 3 is labeled "Apples and Oranges"',
                                              "Box 3, and it is an apple")),
    "set-probability": (set_probability(), ("30 students", "18 play soccer",
                                            "12 play basketball", "5 play both")),
    "two-trains": (two_trains(), ("at 9:00", "60 km/h", "at 10:00", "90 km/h", "260 km")),
    "knights-knaves": (knights_and_knaves(), ("Exactly one of us three is a knight",
                                              "A and I are of different kinds",
                                              "B and I are of the same kind")),
    "distinct-digit-fives": (distinct_digit_fives(), ("1000 to 9999", "four different",
                                                      "divisible by 5")),
    "linear-recurrence": (linear_recurrence(), ("a1 = 3", "a(n+1) = 2·a(n) − 1", "a10")),
    "chained-percentages": (chained_percentages(), ("$80", "raised by 25%",
                                                    "lowered by 20%", "raised by 10%")),
    "letter-count-berries": (count_letter("strawberry raspberry blueberry", "r"),
                             ('"strawberry raspberry blueberry"', 'letter "r"')),
    "bat-and-ball": (bat_and_ball(), ("$1.10 in total", "$1.00 more")),
    "multiples-three-five": (multiples_three_five(), ("from 1 to 100", "multiples of 3",
                                                      "multiples of 5")),
    "letters-in-strawberry": (count_letter("strawberry", "r"), ('"strawberry"', 'letter "r"')),
}


def task(task_id: str) -> TaskSpec:
    return load_task(TASKS / f"{task_id}.md")


def test_the_suite_has_the_twelve_scenarios_and_nine_use_final_answer() -> None:
    reasoning = [t for t in load_tasks(task_paths([], base=TASKS)) if t.suite == "reasoning"]
    assert {t.id for t in reasoning} == set(SCENARIOS)
    kinds = [t.check_type for t in reasoning]
    assert kinds.count("final_answer") == 9
    assert sorted(k for k in kinds if k != "final_answer") == [
        "exact_or_contains", "exact_or_contains", "regex"]


@pytest.mark.parametrize("task_id", list(SCENARIOS))
def test_the_task_file_agrees_with_the_independent_answer(task_id: str) -> None:
    computed, facts = SCENARIOS[task_id]
    spec = task(task_id)
    expected = spec.frontmatter["expected"]
    if isinstance(computed, str):
        assert expected == computed
    else:
        assert Fraction(expected) == computed, (expected, computed)
    for fact in facts:  # the prompt still states what the answer was computed from
        assert fact in spec.body, fact


def documented_answers() -> dict[str, str]:
    """The `expected` column of the scenario table in docs/suites.md, by task id."""
    lines = (ROOT / "docs" / "suites.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| task | scenario | check | expected |") + 2  # past the rule line
    rows = itertools.takewhile(lambda line: line.startswith("|"), lines[start:])
    cells = [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]
    return {first.strip("`"): last for first, *_, last in cells}


def test_the_computed_answers_are_the_documented_ones() -> None:
    """The table users read (docs/suites.md) against the task files and the code above."""
    documented = documented_answers()
    assert documented.keys() == SCENARIOS.keys()
    for task_id, text in documented.items():
        assert task(task_id).frontmatter["expected"] == text, task_id
        computed = SCENARIOS[task_id][0]
        assert (text if isinstance(computed, str) else Fraction(text)) == computed, task_id


# ---------------------------------------------------------------- checks on answers

REASONING = ("Let me work through this carefully. First I restate the problem, then I "
             "compute each step and check it against the constraints before I conclude.\n")
PADDING = "I re-check every step of the working once more before concluding. " * 6


def verdict(task_id: str, answer: str, thinking: str = "",
            finish: str | None = "stop") -> Verdict:
    transcript = Transcript(answer=answer, thinking=thinking, finish_reason=finish)
    return judge(task(task_id), transcript, Settings(max_tokens=256))


def passes(task_id: str, answer: str, **kwargs: str | None) -> bool:
    return verdict(task_id, answer, **kwargs).result == "pass"  # type: ignore[arg-type]


# The right final answer as models write it, and near misses that must fail.
FINAL: dict[str, tuple[list[str], list[str]]] = {
    "two-trains": (["11:20", "11:20 a.m", "11:20 AM"], ["11:28", "11:02", "1:20", "11:200"]),
    "knights-knaves": (["A is a knave, B and C are knights",
                        "A is a knave; B is a knight; C is a knight",
                        "A: knave, B: knight, C: knight",
                        "B and C are knights, while A is a knave"],
                       ["A is a knight, B and C are knaves",
                        "A is a knave, B is a knight, C is a knave",
                        "A is a knave, B and C are knaves"]),
    "distinct-digit-fives": (["952", "952 numbers", "952.0"], ["9520", "95", "1952", "504"]),
    "linear-recurrence": (["1025", "1,025", "a10 = 1025"], ["1024", "10250", "11025"]),
    "chained-percentages": (["88", "$88", "$88.00", "88 dollars"], ["880", "8.8", "188"]),
    "letter-count-berries": (["8", "eight", "8 times", "8 r's"], ["18", "7", "8.5", "81"]),
    "bat-and-ball": (["5", "5 cents", "five cents", "5¢"], ["10", "10 cents", "0.5", "15"]),
    "multiples-three-five": (["47", "47 numbers"], ["147", "46", "4.7", "470"]),
    "letters-in-strawberry": (["3", "three", "3 r's"], ["2", "13", "30", "3.5"]),
}


def right_forms(value: str) -> list[str]:
    """How models write a final answer: plain, bold, boxed LaTeX, period, bullet, own line."""
    return [
        f"{REASONING}Final answer: {value}",
        f"{REASONING}**Final answer:** {value}",
        f"{REASONING}Final answer: **{value}**.",
        f"{REASONING}Final answer: $\\boxed{{{value}}}$",
        f"{REASONING}- Final answer: {value}",
        f"{REASONING}### Final Answer:\n\n{value}\n",
        f"<think>{REASONING}</think>\n\nFinal answer: {value}",
    ]


@pytest.mark.parametrize("task_id", list(FINAL))
def test_final_answer_accepts_the_right_answer_in_every_form(task_id: str) -> None:
    rights, _ = FINAL[task_id]
    for value in [task(task_id).frontmatter["expected"], *rights]:
        for answer in right_forms(value):
            assert passes(task_id, answer), answer


@pytest.mark.parametrize("task_id", list(FINAL))
def test_final_answer_rejects_near_misses_and_misplaced_answers(task_id: str) -> None:
    right = task(task_id).frontmatter["expected"]
    _, wrongs = FINAL[task_id]
    for wrong in wrongs:
        assert not passes(task_id, f"{REASONING}Final answer: {wrong}"), wrong
        # the right words early in the reasoning, a wrong conclusion
        assert not passes(task_id, f"Final answer: {right}\nWait, that is wrong. {REASONING}"
                                   f"Final answer: {wrong}"), wrong
    # the right answer without the marker is no answer
    assert not passes(task_id, f"{REASONING}The answer is {right}.")
    # the right answer only inside the thinking
    assert not passes(task_id, f"<think>Final answer: {right}</think>\nFinal answer: {wrongs[0]}")
    assert not passes(task_id, "", thinking=f"Final answer: {right}", finish="length")
    # a trailing remark after the value: the line must match in full
    assert not passes(task_id, f"Final answer: {right} or maybe {wrongs[0]}")


def test_a_response_cut_off_inside_think_has_no_answer_and_is_flagged() -> None:
    cut = verdict("bat-and-ball", "<think>The ball costs 5 cents. Final answer: 5",
                  finish="length")
    assert cut.result == "fail" and cut.truncated_thinking and cut.truncated
    assert "inside <think>" in cut.notes
    separate = verdict("bat-and-ball", "", thinking="Final answer: 5", finish="length")
    assert separate.truncated_thinking
    ended = verdict("bat-and-ball", "<think>Final answer: 5", finish="stop")
    assert ended.result == "fail" and not ended.truncated_thinking
    closed = verdict("bat-and-ball", "", thinking="It is 5 cents.", finish="stop")
    assert closed.result == "fail" and not closed.truncated_thinking
    stray = verdict("bat-and-ball", "Final answer: 5</think>\nFinal answer: 10")  # template
    assert stray.result == "fail"  # opened <think> in the prompt: before </think> is thinking
    replayed = verdict("bat-and-ball", "<think>Final answer: 5", finish=None)  # no finish known
    assert replayed.result == "fail" and not replayed.truncated and not replayed.truncated_thinking
    assert "finish reason unknown" in replayed.notes


CONTAINS: dict[str, tuple[list[str], list[str]]] = {
    "discount-tax": (
        ["114.6", "The customer pays $114.60.", "Total: **$114.60**",
         "\\[ \\boxed{114.6} \\]", "- After tax: $114.6\n- Done",
         "Price after discount: $110.50\nAfter coupon: $95.50\nAfter tax:\n$114.60",
         "Final answer: $114.60"],
        ["$1114.60", "114.06", "$114.65", "$11.46", "1,114.6", "Final answer: 110.5"]),
    "set-probability": (
        ["1/6", "The probability is 1/6.", "P(neither) = \\boxed{\\dfrac{1}{6}}",
         "**5/30 = 1/6**", "- neither: \\frac{1}{6}", "Final answer: 1/6",
         "P = $\\frac16$"],
        ["11/60", "1/60", "1/16", "16.7%", "21/6", "Final answer: 5/36"]),
}


@pytest.mark.parametrize("task_id", list(CONTAINS))
def test_exact_or_contains_reads_numbers_as_whole_numbers(task_id: str) -> None:
    rights, wrongs = CONTAINS[task_id]
    for right in rights:
        assert passes(task_id, f"{REASONING}{right}"), right
    for wrong in wrongs:
        assert not passes(task_id, f"{REASONING}{wrong}"), wrong


@pytest.mark.parametrize("task_id", list(CONTAINS))
def test_exact_or_contains_reads_the_conclusion_not_the_working(task_id: str) -> None:
    right = task(task_id).frontmatter["expected"]
    wrong = CONTAINS[task_id][1][0]
    # right early, then more than 300 characters of working, then a wrong conclusion
    assert not passes(task_id, f"At first I got {right}. {PADDING}So the answer is {wrong}.")
    assert not passes(task_id, f"So the answer is {wrong}.", thinking=f"It is {right}.")
    assert not passes(task_id, f"<think>{right}</think>So the answer is {wrong}.")
    # a marker line, when there is one, is the conclusion
    assert not passes(task_id, f"It might be {right}.\nFinal answer: {wrong}")
    # right and then rejected, within the last 300 characters: the last sentence that
    # states a number is the conclusion
    assert not passes(task_id, f"Some would say {right}, but that is wrong. It is {wrong}.")
    # …and other numbers in the concluding sentence do not hide the answer
    assert passes(task_id, f"Checked twice (2 ways): the answer is {right} (not {wrong}).")


BOX_RIGHT = [
    "Box 1: Oranges, Box 2: Apples and Oranges, Box 3: Apples",
    "Box 1: Oranges\nBox 2: Apples and Oranges\nBox 3: Apples.",
    "- **Box 1**: Oranges\n- **Box 2**: Apples and Oranges\n- **Box 3**: Apples",
    "1. Box 1 contains only oranges.\n2. Box 2 contains both apples and oranges.\n"
    "3. Box 3 contains only apples.",
    "Box 1 (labeled Apples) contains Oranges. Box 2 (labeled Oranges) contains Apples and "
    "Oranges. Box 3 (labeled Apples and Oranges) contains Apples.",
    "| Box 3 | Apples |\n| Box 1 | Oranges |\n| Box 2 | Mixed |",
    "**Box 1:** $\\text{Oranges}$; **Box 2:** Apples & Oranges; **Box 3:** Apples",
]
BOX_WRONG = [
    "Box 1: Apples and Oranges, Box 2: Apples, Box 3: Oranges",
    "Box 1: Oranges, Box 2: Apples, Box 3: Apples and Oranges",
    "Box 1: Oranges and Apples, Box 2: Oranges, Box 3: Apples",
    "Box 1: Oranges, Box 2: Apples and Oranges",  # Box 3 never concluded
    "Box 1 oranges apples apples and oranges box 2 box 3 apples",  # scattered words
]


def test_regex_accepts_the_conclusion_in_every_layout() -> None:
    for answer in BOX_RIGHT:
        assert passes("mislabeled-boxes", f"{REASONING}{answer}"), answer


def test_regex_rejects_wrong_or_misplaced_conclusions() -> None:
    right = BOX_RIGHT[0]
    for answer in BOX_WRONG:
        assert not passes("mislabeled-boxes", f"{REASONING}{answer}"), answer
    wrong = BOX_WRONG[0]
    assert not passes("mislabeled-boxes", f"Maybe {right}. {PADDING} In the end: {wrong}")
    assert not passes("mislabeled-boxes", wrong, thinking=right)
    assert not passes("mislabeled-boxes", f"<think>{right}</think>{wrong}")
    assert not passes("mislabeled-boxes", "", thinking=right, finish="length")


def check_patterns(check: Mapping[str, Any]) -> list[str]:
    """Every regular expression of a check: regex patterns and subjects, final_answer's
    accept list, a summary's facts."""
    return [*check.get("patterns", []), *(check.get("subjects") or []),
            *(check.get("accept") or []),
            *(pattern for fact in check.get("facts", []) for pattern in fact["any"])]


def test_bundled_regex_patterns_use_bounded_gaps() -> None:
    """Loading refuses only `.*`, `.+` and `.{n,}` in regex checks; a gap spelled otherwise
    (`[^.]*`, `(?:\\w+ )*`) or in an `accept` or summary pattern loads, and would let a
    check skip from a right word to a wrong one. Read from each pattern's parse tree."""
    for gap in (r".*", r"box 1.+apples", r"[^.]*", r"(?:\w+ )*", r"\D+", r"a.{2,}?b"):
        assert unbounded_gaps(gap) == 1, gap  # the detector sees every spelling
    for bounded in (r"(?:\w+ ){0,4}", r"\w+", r"\s*", r"oranges?", r"(?!box\b)\w+ "):
        assert unbounded_gaps(bounded) == 0, bounded
    patterns = [(spec.id, pattern) for spec in load_tasks(task_paths([], base=TASKS))
                for pattern in check_patterns(spec.check)]
    assert len(patterns) >= 20  # regex, final_answer and summary tasks all looked at
    assert [(task_id, p) for task_id, p in patterns if unbounded_gaps(p)] == []


def test_answer_excerpt_and_evidence_show_what_was_scored() -> None:
    v = verdict("two-trains", f"{REASONING}Final answer: **11:20**")
    assert v.evidence["extracted"] == "11:20"
    assert v.evidence["check"] == "final_answer" and v.evidence["matched"]
    v = verdict("distinct-digit-fives", "Final answer: 952.0")
    assert v.evidence["evaluator"] == "numeric" and v.evidence["evaluator_decided"]


# ---------------------------------------------------------------- retracted and hedged answers

# The right mapping stated, then replaced by a wrong one: the last statement of a box counts.
BOX_RETRACTED = [
    f"One might think {BOX_RIGHT[0]}, but that is wrong. {BOX_WRONG[0]}.",
    f"{BOX_RIGHT[0]}.\nWait, that is wrong: Box 1 holds Apples and Oranges.",
    f"{BOX_RIGHT[1]}\nActually no.\nBox 2: Apples\nBox 3: Oranges",
    f"{BOX_RIGHT[2]}\n\nCorrection:\n- **Box 3**: Oranges",
    f"{BOX_RIGHT[4]} Hmm, on second thought Box 1 (labeled Apples) contains Apples and "
    "Oranges.",
]
# A concluding statement that is right, with the boxes named in another order or framed.
BOX_RESTATED = [
    f"Box 1 might look like Apples. {BOX_RIGHT[0]}",
    f"My first guess was {BOX_WRONG[0]}, but that breaks the labels. So: {BOX_RIGHT[0]}.",
    f"{BOX_WRONG[1]} is impossible.\n\n{BOX_RIGHT[5]}",
]


def test_regex_counts_the_last_statement_of_each_subject() -> None:
    for answer in BOX_RETRACTED:
        assert not passes("mislabeled-boxes", f"{REASONING}{answer}"), answer
    for answer in BOX_RESTATED:
        assert passes("mislabeled-boxes", f"{REASONING}{answer}"), answer
    v = verdict("mislabeled-boxes", f"{REASONING}{BOX_RETRACTED[0]}")
    assert "where its subject is stated last" in v.notes


def test_every_bundled_regex_check_names_a_subject_per_pattern() -> None:
    regex = [t for t in load_tasks(task_paths([], base=TASKS)) if t.check_type == "regex"]
    assert regex
    for spec in regex:
        assert len(spec.check.get("subjects") or []) == len(spec.check["patterns"]), spec.id


def test_a_subject_list_that_does_not_fit_is_refused_at_load() -> None:
    from benchrig.checks import check_problems

    meta = {"expected": "Box 1: Oranges", "check": {
        "type": "regex", "patterns": [r"\bbox 1 oranges\b"], "subjects": ["box 1", "box 2"]}}
    assert any("2 subjects for 1 patterns" in p for p in check_problems(meta))
    meta["check"]["subjects"] = ["box (1"]
    assert any("not a valid regular expression" in p for p in check_problems(meta))
    meta["check"]["subjects"] = ["box .*"]
    assert any("unbounded gap" in p for p in check_problems(meta))
    meta["check"]["subjects"] = ["box 2"]  # never stated in the expected answer
    assert any("does not match pattern 1" in p for p in check_problems(meta))
    meta["check"]["subjects"] = [r"\bbox 1\b"]
    assert check_problems(meta) == []


# Hedges: the expected number and another offered as alternatives in the conclusion.
HEDGES = ["The answer is {right} or maybe {wrong}.", "It is either {right} or {wrong}.",
          "So: {right} / {wrong}", "The answer: {wrong}, or possibly {right}.",
          "Final answer: {right} or {wrong}", "The result is {right} (or perhaps {wrong})."]
# Other numbers beside the answer in the concluding sentence that are working or a
# restatement, not a second candidate.
NOT_HEDGES = {
    "discount-tax": ["110.5 - 15 = 95.5, and 95.5 × 1.2 = 114.6.",
                     "The customer pays $114.60, or about $115.",
                     "The total is $114.60 (4.5% more than the list price after 15% off).",
                     "The customer pays $114.60, not $120."],
    "set-probability": ["P(neither) = 5/30 = 1/6.", "The probability is 1/6, or about 16.7%.",
                        "The probability is 5/30, or 1/6.", "1/6 ≈ 0.1667"],
}


@pytest.mark.parametrize("task_id", list(CONTAINS))
def test_exact_or_contains_rejects_a_hedged_conclusion(task_id: str) -> None:
    right = task(task_id).frontmatter["expected"]
    for wrong in CONTAINS[task_id][1][:3]:
        for hedge in HEDGES:
            answer = hedge.format(right=right, wrong=wrong.removeprefix("$"))
            assert not passes(task_id, f"{REASONING}{answer}"), answer
    v = verdict(task_id, f"{REASONING}The answer is {right} or maybe 7.")
    assert "another candidate" in v.notes and "'7'" in v.notes
    for answer in NOT_HEDGES[task_id]:
        assert passes(task_id, f"{REASONING}{answer}"), answer
