"""The optional `evaluator` layer of an answer check: `numeric` and `numeric_text`.

It runs before the check type and decides only when both the answer and the expected
value parse as numbers; otherwise it is a no-op and the check type decides. That keeps a
word answer (expected "Box 1: Oranges …") from ever being read as a number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from benchrig.checks.normalize import exact_number
from benchrig.events import emit

UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}
SCALES = {"thousand": 1000, "million": 1_000_000}
SHOWN_EXACTLY = 10**15  # beyond it a value is shown as its integer, not through a float
SMALL = {word: value for value, word in enumerate(UNITS)} | TENS


def as_fraction(text: str) -> Fraction | None:
    """`numeric`: the trimmed text as an exact Fraction ("42", "42.0", " 42 ", "1/6"); a
    number too long to be an answer is none (normalize.exact_number)."""
    return exact_number(text)


def _below_hundred(word: str) -> int | None:
    if word in SMALL:
        return SMALL[word]
    tens, dash, unit = word.partition("-")
    if dash and tens in TENS and unit in SMALL and 1 <= SMALL[unit] <= 9:
        return TENS[tens] + SMALL[unit]
    return None


def _below_hundred_at(words: list[str], i: int) -> tuple[int, int] | None:
    """A number below a hundred at words[i]: "forty-two", or "forty two" → (value, next)."""
    value = _below_hundred(words[i]) if i < len(words) else None
    if value is None:
        return None
    unit = SMALL.get(words[i + 1]) if i + 1 < len(words) else None
    if value in TENS.values() and unit is not None and 1 <= unit <= 9:
        return value + unit, i + 2
    return value, i + 1


def _hundreds(words: list[str], i: int) -> tuple[int, int] | None:
    """A group below a thousand at words[i] ("seven hundred twenty-one") → (value, next)."""
    first = _below_hundred_at(words, i)
    if first is None:
        return None
    value, i = first
    if i < len(words) and words[i] == "hundred" and 1 <= value <= 9:
        value, i = value * 100, i + 1
        rest = _below_hundred_at(words, i)
        if rest is not None and rest[0]:
            value, i = value + rest[0], rest[1]
    return value, i


def words_to_number(text: str) -> int | None:
    """English number words, lowercase as written ("forty-two", "twenty one", "one hundred
    twenty-one", "two thousand five hundred", "one million") → int; anything else → None.

    Case-sensitive on purpose: "Forty-Two" is not converted.
    """
    words = text.strip().split()
    total, i, last_scale = 0, 0, None
    while i < len(words):
        group = _hundreds(words, i)
        if group is None:
            return None
        value, i = group
        scale = SCALES.get(words[i]) if i < len(words) else None
        if scale is None:  # a group without a scale word ends the number
            return total + value if i == len(words) else None
        if value == 0 or (last_scale is not None and scale >= last_scale):
            return None
        total, i, last_scale = total + value * scale, i + 1, scale
    return total if words else None


def as_number_or_words(text: str) -> Fraction | None:
    """`numeric_text`: a number as `numeric` reads it, or English number words."""
    value = as_fraction(text)
    if value is not None:
        return value
    words = words_to_number(text)
    return Fraction(words) if words is not None else None


Parser = Callable[[str], Fraction | None]
EVALUATORS: dict[str, Parser] = {"numeric": as_fraction, "numeric_text": as_number_or_words}


@dataclass(frozen=True)
class Decision:
    """The evaluator's verdict: None when it did not decide (no evaluator, or a side that is
    not a number)."""

    evaluator: str | None
    passed: bool | None
    answer_value: str | None = None
    expected_value: str | None = None


def known_evaluator(name: str | None, task_id: str) -> str | None:
    """The evaluator to use; an unknown name behaves as none and is logged on stderr."""
    if name is None or name in EVALUATORS:
        return name
    emit("evaluator.unknown", task=task_id, evaluator=name, known=sorted(EVALUATORS),
         effect="treated as no evaluator")
    return None


def evaluate(name: str | None, answer: str, expected: str) -> Decision:
    """Compare exactly when both sides parse with evaluator `name` (already known)."""
    if name is None:
        return Decision(None, None)
    parse = EVALUATORS[name]
    got, want = parse(answer), parse(expected)
    if got is None or want is None:
        return Decision(name, None)
    return Decision(name, got == want, show(got), show(want))


def show(value: Fraction) -> str:
    """A value as a person writes it: 114.6 rather than 573/5, 1/6 as 1/6."""
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1 or abs(value) >= SHOWN_EXACTLY:  # float() would overflow or round
        return str(value)
    text = f"{float(value):.12f}".rstrip("0").rstrip(".")
    return text if Fraction(text) == value else str(value)
