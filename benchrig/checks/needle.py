"""The `needle` check of the context suite: one step passes when its answer, after any thinking,
holds the step's code as a whole number and offers no other code beside it."""

from __future__ import annotations

import re

from benchrig.checks.answers import contains
from benchrig.checks.conclusion import mentions
from benchrig.checks.guard import model_text
from benchrig.checks.normalize import clean, final_text, parse_number
from benchrig.core.check import CheckContext, check
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict
from benchrig.haystack import EXPECTED_KEY, Scenario, scenario_problems

__all__ = ["EXPECTED_KEY", "check_needle", "found"]
EXCERPT_CHARS = 200


def found(expected: str, answer: str) -> bool:
    """`expected` (a filled template) in `answer` as a whole: a number by its exact value,
    never inside a longer number (1234567 does not hold 123456, nor 123456.5); other text
    with no digit glued to either end."""
    text = clean(answer)
    if parse_number(expected) is not None:
        return contains(expected, text)
    phrase = re.escape(expected)
    return re.search(rf"(?<![\w.,]){phrase}(?![\d])", text, re.IGNORECASE) is not None


def other_code(expected: str, answer: str) -> str | None:
    """Another candidate for a numeric code that `answer` offers beside it ("482913 or
    482931"): a number of the same digit count, other than the code, not rejected ("not
    482931"). None when there is none, or the expected answer is not a number."""
    want = parse_number(expected)
    if want is None:
        return None
    width = sum(ch.isdigit() for ch in expected)
    for mention in mentions(clean(answer)):
        if (mention.strength != "rejected" and mention.value != want
                and sum(ch.isdigit() for ch in mention.shown) == width):
            return mention.shown
    return None


# its attempt must ask window by window: the loader asks the task's suite (by_window)
@check("needle", validate=scenario_problems, by_window=True)
def check_needle(task: TaskSpec, transcript: Transcript, settings: Settings,
                 context: CheckContext) -> Verdict:
    """One step: the runner gives the step's expected answer in `task.check`."""
    expected = str(task.check.get(EXPECTED_KEY) or Scenario.of(task.frontmatter, "").expected)
    answer = final_text(transcript.answer, transcript.thinking)
    with model_text("the answer"):  # a crash on it fails the step (checks.guard)
        passed = not answer.ended_in_thinking and found(expected, answer.text)
        other = other_code(expected, answer.text) if passed else None
    passed = passed and other is None
    if answer.ended_in_thinking:
        message = "the response ended inside <think>: no answer"
    elif other is not None:
        message = (f"found {expected} but also {other!r}: an answer offering alternatives is "
                   "not an answer")
    elif passed:
        message = f"found {expected}"
    else:
        message = f"{expected} not in the answer"
    return Verdict("pass" if passed else "fail", (CheckDetail("needle", passed, message, 0.0),),
                   message, evidence={"check": "needle", "expected": expected,
                                      "answer_excerpt": answer.text[-EXCERPT_CHARS:]})
