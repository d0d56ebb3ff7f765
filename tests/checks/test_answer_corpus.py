"""The `exact_or_contains` conclusion rule, both directions, on a corpus of natural answer styles:
the right value phrased 60+ ways passes; a wrong, corrected-away, rejected or hedged right
value phrased 60+ ways fails (docs/suites.md#exact_or_contains). Data-driven: each template
runs against both numeric tasks, with that task's right value written several ways."""

from __future__ import annotations

import pytest

from benchrig.checks.judge import judge
from benchrig.core.settings import Settings
from benchrig.core.transcript import Transcript
from benchrig.spec import load_task
from tests.conftest import TASKS

# Per task: right values as written, one wrong value, an approximation of the right one, a
# worked explanation whose last number is not the answer.
VALUES = {
    "discount-tax": {
        "rights": ["114.6", "$114.60", "114.60", "$114.6"],
        "w": "120", "approx": "about $115",
        "why": "The coat costs $130, the discount takes $19.50 off, the coupon another $15, "
               "and the tax adds $19.10.",
    },
    "set-probability": {
        "rights": ["1/6", "\\frac{1}{6}", "5/30", "\\dfrac{1}{6}"],
        "w": "11/60", "approx": "about 16.67%",
        "why": "Of the 30 students, 25 play at least one sport, which leaves 5 who play "
               "neither.",
    },
}

RIGHT = [
    "{v}", "{v}.", "The answer is {v}.", "Answer: {v}", "**Answer:** {v}",
    "The final answer is {v}.", "So the answer is {v}.", "Therefore, the answer is **{v}**.",
    "\\boxed{{{v}}}", "The answer is $\\boxed{{{v}}}$.", "Thus the result is {v}.",
    "Result: {v}", "It comes to {v}.", "The answer is {v}, not {w}.", "It is {v} (not {w}).",
    "Not {w} but {v}.", "{w}? No wait, it is {v}.",
    "At first I got {w}, but that was a mistake. The answer is {v}.",
    "I initially computed {w}. On second thought, the answer is {v}.",
    "{w} is wrong; the correct answer is {v}.",
    "Some would say {w}, but that is wrong. It is {v}.",
    "The answer is {v}.\n\nExplanation: {why}", "{why} So the answer is {v}.",
    "{why} Therefore {v}.", "{v}. {why}", "- Result: **{v}**", "### Answer\n\n{v}",
    "The answer is {v} ({approx}).", "The answer is {v}, i.e. {approx}.",
    "{v}, that's {approx}.", "The answer is {v}. That is {approx}.", "Answer = {v}",
    "The answer should be {v}.", "I'm fairly confident the answer is {v}.",
    "I believe it is {v}.", "My answer: {v}", "**{v}**", "It's {v}.", "That gives {v}.",
    "We end up with {v}.", "{v} is the answer.", "The correct answer is {v}.",
    "After working it out, I get {v}.", "Answer: {v} (I double-checked this twice).",
    "The answer is {v}. I checked it 2 ways.", "In short: {v}.", "Final result → {v}",
    "The value is {v}.", "= {v}", "\\[ {v} \\]", "The answer is:\n\n{v}", "Answer\n{v}",
    "| Quantity | Value |\n|---|---|\n| answer | {v} |",
    "{w} was my first guess, but it is wrong. Correct: {v}.", "Not {w}. The answer is {v}.",
    "Definitely {v}.", "Final answer — {v}.", "The answer is {v}; I am sure of it.",
    "I'm not sure at first, but after checking, the answer is {v}.",
    "Hmm, let me think. {v}.", "OK so the answer is {v}!",
    "Answer: {v}. (Rounded figures like {approx} are only approximations.)",
    "Calculation done. Answer: {v}. Units: none.", "The answer is {v} rather than {w}.",
    "The answer is {v} and not {w}.", "Final answer: {v}", "Final answer: **{v}**.",
]

WRONG = [
    "{w}", "The answer is {w}.", "{v}, hmm, no wait, {w}.",
    "{v} (I am not sure, it might be {w})", "The answer is {v} or {w}.",
    "The answer is {v} or maybe {w}.", "It is either {v} or {w}.", "{v} / {w}", "{v}? {w}?",
    "The answer is {v}. Actually, it's {w}.", "The answer is {v}. Wait, that's wrong — it is {w}.",
    "The answer is {v}, though it could also be {w}.", "The answer is {v}, but it may be {w}.",
    "I think it's {v}, but possibly {w}.", "The answer is {w}, or possibly {v}.",
    "Perhaps {v}, perhaps {w}.", "Either {w} or {v}.",
    "The answer is {v}. Hmm, let me recompute... {w}.",
    "The answer is {v}. On second thought, {w}.",
    "At first I got {v}, but that was a mistake. The answer is {w}.",
    "Some would say {v}, but that is wrong. It is {w}.", "The answer is not {v}; it is {w}.",
    "It is not {v}.", "{v} is wrong. The answer is {w}.", "I'm not sure. It's {v} or {w}.",
    "Could be {v}, could be {w}.", "It might be {v}, or it might be {w}.", "\\boxed{{{w}}}",
    "Answer: {w}", "Final result: {v}... no, {w}.", "My best guess is {v}, unless it is {w}.",
    "{v} (or perhaps {w})", "{v}, or alternatively {w}.", "The answer is {v}. Correction: {w}.",
    "The answer is {v}. Sorry, I mean {w}.", "The answer is {v}. Scratch that, it's {w}.",
    "Let me reconsider: {v} is too high; {w}.", "{v}. No, {w}.",
    "I computed {v}, then rechecked and got {w}.", "The answer is {w} (not {v}).",
    "Answer: {v}? Or {w}? I can't tell.", "Between {v} and {w}; I don't know which.",
    "{w}. That is the answer, not {v}.", "The answer is {v}. I'm unsure; it could be {w}.",
    "If the order is different, {v}; otherwise {w}.",
    "The answer is {v}. Hold on, I made an error: {w}.", "The answer is {v}... or is it {w}?",
    "{v} or {w}, depending on rounding.", "The answer is probably {v}, maybe {w}.",
    "I'd say {v}. Then again, {w} is possible.",
    "Answer: {w}. (Earlier I wrote {v}, but that was wrong.)",
    "Two answers are possible: {v} and {w}.", "{v} or {w}", "The answer lies between {v} and {w}.",
    "The answer: {v}; alternatively {w}.", "The answer is {v}\nActually no, {w}.",
    "The answer is {v}.\n\nWait. Recalculating: the answer is {w}.", "{v}?? I think {w}.",
    "I'm not sure whether it's {v} or {w}.", "Either way, roughly {v} or {w}.",
    "The answer is {v}. No wait, it's {w}. Yes, {w}.", "Possibly {v}; possibly {w}.",
    "{w}, final.", "Final answer: {v} or {w}", "The answer is {v}.\nFinal answer: {w}",
    "It's {v}. Or {w}. Not sure.", "It is {v}, or else {w}.",
]

# Styles only one task's wording allows (the issue's own examples among them).
TASK_RIGHT = {
    "discount-tax": ["$114.60. This includes $19.10 of tax.",
                     "The customer pays $114.60 in total, including $19.10 of sales tax.",
                     "Total after discount, coupon and tax: $114.60.",
                     "110.5 - 15 = 95.5, and 95.5 × 1.2 = 114.6.",
                     "$130 × 0.85 = $110.50; $110.50 − $15 = $95.50; $95.50 × 1.2 = $114.60.",
                     "After the 15% discount the coat costs $110.50; the coupon brings it to "
                     "$95.50; with 20% tax the final price is $114.60.",
                     "The final price is $114.60 (that's $130 − 15% − $15 + 20% tax).",
                     "**Final price: $114.60**", "Total = 95.5 × 1.2 = 114.6",
                     "So she pays 114.6 dollars.",
                     "The customer pays **$114.60**.\n\n- Discount: $19.50\n- Coupon: $15\n"
                     "- Tax: $19.10", "## Result\nThe customer pays $114.60 in total.",
                     "Price after discount: $110.50\nAfter coupon: $95.50\n"
                     "After 20% tax: $114.60"],
    "set-probability": ["The probability is 1/6. That is about 16.67%.",
                        "P(neither) = 5/30 = 1/6.",
                        "5 out of 30 students play neither, so the probability is 1/6.",
                        "1/6 (5 out of 30 students).",
                        "The probability is 1/6, or roughly 0.167.",
                        "The probability that a student plays neither sport is 5/30, which "
                        "simplifies to 1/6.", "Answer: 1/6 ≈ 0.167 (16.7%)",
                        "Probability = 1/6 (about 0.17).",
                        "There are 5 students who play neither, so P = 5/30 = 1/6.",
                        "P(neither) = 1 − 25/30 = 5/30 = 1/6"],
}
TASK_WRONG = {
    "discount-tax": ["114.6, hmm, no wait, 120.", "114.6 (I am not sure, it might be 120)",
                     "She pays 114.6 minus the 15 coupon, so 99.6.",
                     "The customer pays $114.60 before the coupon, so $99.60 after it.",
                     "I got 114.6 but the book says 120, so 120.",
                     "It's 114.6 — or 120 if the tax is applied first.",
                     "The answer is 114.6? I'd go with 120.",
                     "The customer pays $114.60... I mean $120.",
                     "The answer is 114.6. Therefore the customer pays $120."],
    "set-probability": ["The probability is 1/6. Hmm, no: 5/36.",
                        "1/6 or 1/5, I am not sure which.",
                        "The probability is 1/6 - no, it is 1/5.",
                        "Answer: 1/6 (or 1/5 if we count the coach).",
                        "It's 1/6. Hmm. Let me redo it: 1/5.", "The answer is 1/6 and 1/5."],
}
PREFIX = "Let me work through this carefully, one step at a time.\n\n"
assert len(RIGHT) >= 60 and len(WRONG) >= 60


def passes(task_id: str, answer: str) -> bool:
    task = load_task(TASKS / f"{task_id}.md")
    verdict = judge(task, Transcript(answer=PREFIX + answer, finish_reason="stop"),
                    Settings(max_tokens=512))
    return verdict.result == "pass"


def fill(template: str, task_id: str, v: str) -> str:
    values = VALUES[task_id]
    return template.format(v=v, w=values["w"], approx=values["approx"], why=values["why"])


@pytest.mark.parametrize("task_id", list(VALUES))
def test_right_answers_pass_in_every_style(task_id: str) -> None:
    failed = [fill(t, task_id, v) for t in RIGHT for v in VALUES[task_id]["rights"]
              if not passes(task_id, fill(t, task_id, v))]
    failed += [a for a in TASK_RIGHT[task_id] if not passes(task_id, a)]
    assert failed == []


@pytest.mark.parametrize("task_id", list(VALUES))
def test_wrong_retracted_and_hedged_answers_fail_in_every_style(task_id: str) -> None:
    passed = [fill(t, task_id, v) for t in WRONG for v in VALUES[task_id]["rights"]
              if passes(task_id, fill(t, task_id, v))]
    passed += [a for a in TASK_WRONG[task_id] if passes(task_id, a)]
    assert passed == []
