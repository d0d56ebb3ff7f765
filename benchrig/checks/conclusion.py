"""The number an answer concludes with, read as a careful grader reads it: the value it states
as the answer, later corrections replacing it, asides and working beside it ignored, and a
second value offered as an alternative making it no answer (docs/suites.md#exact_or_contains).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from benchrig.checks.normalize import NUMBER, _value, clean
from benchrig.textsafe import cap

Strength = Literal["strong", "weak", "rejected"]


@dataclass(frozen=True)
class Mention:
    """One number in the answer: where, its exact value, and how it is stated — `strong`
    (a value the answer asserts), `weak` (working, an approximation, a percentage, a part, an
    aside) or `rejected` ("not 120")."""

    start: int
    end: int
    shown: str
    value: Fraction | None  # None: too long to read (normalize.MAX_DIGITS), or n/0
    strength: Strength


@dataclass(frozen=True)
class Conclusion:
    """What the answer concludes: the stated mention (None: it states no number), how it was
    found, and the other value it offers as an alternative, if any (then it is no answer)."""

    stated: Mention | None
    how: str
    alternative: Mention | None = None
    replaced: int = 0  # earlier stated values a correction replaced


_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
# A value set in bold on its own (`**$114.60**`) is stated as the answer.
_BOLD_VALUE = re.compile(r"\*\*\s*([$€£]?\s*[-−]?\d[\d,./]*\s*(?:%|dollars|cents)?)\s*\*\*")
# A phrase that states the answer; it counts only with a number close after it.
CUE = re.compile(r"\b(?:final\s+)?(?:answer|result)\b(?:\s+(?:to\s+\w+\s+)?"
                 r"(?:is|was|would\s+be|will\s+be|comes\s+to|should\s+be)\b|\s*[:=])",
                 re.IGNORECASE)
CUE_REACH = 48  # characters from a cue to its number
SHORT_STATEMENT = 3  # words of a line's opening sentence that states the value alone
READ_MENTIONS = 2000  # numbers read after a statement, before the end, or around the value
SENTENCE = re.compile(r"[.!?;](?=\s|$)|\n")
CLAUSE = re.compile(r"[.!?;,:()\[\]\n—–]|\s-\s|\bbut\b|\bso\b|\band\b", re.IGNORECASE)

# Words right before a number (its clause) that make it something other than a statement.
APPROXIMATE = re.compile(r"(?:\babout|\bapproximately|\bapprox\.?|\broughly|\baround|"
                         r"\bnearly|\balmost|\bclose\s+to|≈|~|\bor\s+so)\s*[$€£]?\s*$",
                         re.IGNORECASE)
PART = re.compile(r"\b(?:includ(?:es|ing|ed|e)|comprising|of\s+which|plus|minus|out\s+of|"
                  r"from|times|multiplied\s+by|divided\s+by|over)\b[^.;\n]{0,24}$",
                  re.IGNORECASE)
NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\brather\s+than|\binstead\s+of|\bas\s+opposed\s+to|"
                     r"\bwrong(?:ly)?|\bincorrect(?:ly)?|≠)\b[^.;,\n]{0,16}$", re.IGNORECASE)
OPERATOR_BEFORE = re.compile(r"(?:[×*+÷·−-]|\d\s*x)\s*[$€£]?\s*$")
OPERATOR_AFTER = re.compile(r"^\s*%?\s*(?:[×*+÷·−]|-\s*[$€£]?\s*\d|x\s*[$€£]?\s*\d|"
                            r"(?:times|plus|minus|multiplied|divided)\b)", re.IGNORECASE)
PERCENT_AFTER = re.compile(r"^\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)

# Between a stated value and a later one: the later one replaces it (a correction) …
CORRECTION = re.compile(
    r"\b(?:no\s+wait|wait|actually|correction|mistake|wrong|oops|sorry|scratch\s+that|"
    r"on\s+second\s+thought|recalculat\w*|re-?check\w*|re-?comput\w*|let\s+me\s+redo|"
    r"i\s+mean|rather|instead|hold\s+on|hmm+|no,|not\s+right|incorrect|"
    r"it(?:'s|\s+is)|it\s+must\s+be|it\s+should\s+be|i\s+get|i\s+got|comes\s+to|in\s+fact|"
    r"i\s+think|i\s+believe|i'd\s+say|i\s+would\s+say|go(?:ing)?\s+with|settle\s+on|"
    r"too\s+(?:high|low|big|small|large|much|little)|"
    r"therefore|thus|hence|in\s+total|overall|finally|in\s+the\s+end|altogether)\b"
    r"|\bno\b", re.IGNORECASE)
# … or is offered beside it (a hedge: no answer). Words that make a value a candidate where
# they stand ("it might be 120"), and the words that may join two candidates on their own.
HEDGE = re.compile(r"\b(?:maybe|perhaps|possibl[ey]|might|could|may|alternatively|otherwise|"
                   r"then\s+again|"
                   r"not\s+sure|unsure|uncertain|not\s+certain|don't\s+know|do\s+not\s+know|"
                   r"guess|unless)\b", re.IGNORECASE)
JOINING = frozenset({"or", "maybe", "perhaps", "possibly", "alternatively", "otherwise"})
JOINING_TOO = JOINING | {"probably", "it", "is", "it's", "its", "could", "might", "be", "also",
                         "else", "even", "either"}
SIGN_JOINTS = frozenset({"/", "?", "or"})


def _strength(text: str, start: int, end: int, percent_is_value: bool) -> Strength:
    before = text[max(0, start - 64):start]
    clause = CLAUSE.split(before)[-1] if before else ""
    after = text[end:end + 24]
    if NEGATED.search(clause):
        return "rejected"
    if HEDGE.search(clause):
        return "strong"  # offered as a candidate, even "maybe about 120"
    if not percent_is_value and PERCENT_AFTER.match(after):
        return "weak"
    if (APPROXIMATE.search(before) or PART.search(clause) or OPERATOR_BEFORE.search(before)
            or OPERATOR_AFTER.match(after)):
        return "weak"
    if _inside_parentheses(text, start) and not CORRECTION.search(clause) \
            and not re.match(r"\s*(?:or|either)\b", clause, re.IGNORECASE):  # "(or 1/5 if …)"
        return "weak"  # an aside: "1/6 (5 out of 30)"
    return "strong"


def _inside_parentheses(text: str, start: int) -> bool:
    opened = text.rfind("(", max(0, start - 200), start)
    return opened != -1 and text.rfind(")", opened, start) == -1


def mentions(text: str, percent_is_value: bool = False) -> list[Mention]:
    """Every number in `text` (already cleaned), in order, with how it is stated."""
    numbers = _Numbers(text, percent_is_value)
    return [numbers[i] for i in range(len(numbers))]


class _Numbers:
    """The numbers of a text, each read (value, strength) only when asked for: a conclusion
    looks at a few of them, and an answer may hold a hundred thousand."""

    def __init__(self, text: str, percent_is_value: bool) -> None:
        self.text, self.percent = text, percent_is_value
        self.spans = [m.span() for m in NUMBER.finditer(text)]
        self.starts = [a for a, _ in self.spans]
        self.read: dict[int, Mention] = {}

    def __len__(self) -> int:
        return len(self.spans)

    def __getitem__(self, index: int) -> Mention:
        found = self.read.get(index)
        if found is None:
            start, end = self.spans[index]
            match = NUMBER.match(self.text, start)
            assert match is not None  # the same pattern at the same place
            # a value of None still names a number: never the expected one
            found = self.read[index] = Mention(
                start, end, cap(match.group(0).strip(), 40), _value(match),
                _strength(self.text, start, end, self.percent))
        return found

    def first_from(self, position: int) -> int:
        """The index of the first number starting at or after `position`."""
        return bisect.bisect_left(self.starts, position)


def _cue_start(text: str, numbers: _Numbers) -> tuple[int, str] | None:
    """Where the answer is stated: the last cue with a number close behind it (`the answer
    is …`), or the last line that opens with the value alone ("$114.60. This includes …")."""
    cues: list[tuple[int, str]] = []
    for cue in reversed(list(CUE.finditer(text))):
        index = numbers.first_from(cue.end())
        if index == len(numbers) or numbers.starts[index] - cue.end() > CUE_REACH \
                or SENTENCE.search(text, cue.end(), numbers.starts[index]):
            continue
        if numbers[index].strength != "rejected":
            cues.append((cue.start(), f"stated after {cue.group(0).strip()!r}"))
            break
    for line in reversed(list(re.finditer(r"^[ \t]*(\S[^\n]*)", text, re.MULTILINE))):
        if cues and line.start(1) < cues[0][0]:
            break  # a cue further on is found already
        first = SENTENCE.search(line.group(1))
        opening = line.group(1)[: first.start() if first else None]
        begins, ends = line.start(1), line.start(1) + len(opening)
        value_first = re.match(r"[\s$€£=*]*[-−]?\d", opening)  # "$114.60.", not "Tax: $19"
        if not value_first or len(opening.split()) > SHORT_STATEMENT:
            continue
        index = numbers.first_from(begins)
        while index < len(numbers) and numbers.starts[index] < ends:
            if numbers[index].strength == "strong":
                cues.append((begins, "stated on its own"))
                return max(cues)
            index += 1
    return max(cues, default=None)


def _clause_before(text: str, mention: Mention) -> str:
    before = text[max(0, mention.start - 64):mention.start]
    return CLAUSE.split(before)[-1] if before else ""


def _alternative(text: str, stated: Mention, other: Mention) -> bool:
    """Whether `other` is offered beside `stated` as another candidate: joined to it by
    alternative words alone ("or maybe", "either … or") or a lone `/` or `?`, or hedged
    between or where it stands ("I am not sure, it might be 120") with no correction."""
    left, right = (stated, other) if stated.start < other.start else (other, stated)
    joint = text[left.end:right.start]
    if "\n" not in joint and joint.strip(" ()[],$").casefold() in SIGN_JOINTS:
        return True
    if joint.strip().casefold() in {"and", "&"} and _ends_sentence(text, right.end):
        return True  # "1/6 and 1/5.": two answers
    words = re.sub(r"[^a-z']+", " ", joint.casefold()).split()
    if words and set(words) <= JOINING_TOO and JOINING & set(words) \
            and not re.search(r"[=×*·+÷≈~<>]", joint):
        return True
    if CORRECTION.search(joint):
        return False
    if len(words) <= 10 and HEDGE.search(joint):
        return True
    if other.start < stated.start:
        return False
    rest = SENTENCE.search(text, other.end)
    after = text[other.end:rest.start() if rest else None]
    return bool(HEDGE.search(_clause_before(text, other)) or HEDGE.search(after))


def _ends_sentence(text: str, at: int) -> bool:
    """Nothing but punctuation from `at` to the end of its sentence."""
    rest = SENTENCE.search(text, at)
    return not re.search(r"\w", text[at:rest.start() if rest else None])


def conclude(answer: str, percent_is_value: bool = False) -> Conclusion:
    """The value `answer` concludes with (module docstring). An explicit statement (`the
    answer is …`, `\\boxed{…}`, a short opening sentence) counts, unless a later value
    replaces it after a correction or re-assertion ("no wait, 120", "Actually it's 120");
    without one, the last value stated. Working, approximations, percentages, parts and
    asides never conclude; a value offered beside the stated one makes it no answer. At most
    READ_MENTIONS numbers are read on each side of the statement."""
    text = clean(_BOLD_VALUE.sub(r"answer: \1", _BOX.sub(r"answer: \\text{", answer)))
    numbers = _Numbers(text, percent_is_value)
    cue = _cue_start(text, numbers)
    replaced = 0
    if cue is not None:
        begin, how = cue
        index = numbers.first_from(begin)
        after = range(index, min(len(numbers), index + READ_MENTIONS))
        usable = [i for i in after if numbers[i].strength != "rejected"]
        at = next((i for i in usable if numbers[i].strength == "strong"), usable[0])
        corrected = False
        for i in range(at + 1, after.stop):  # a correction anywhere since the stated value
            corrected = corrected or bool(CORRECTION.search(
                text, numbers.spans[i - 1][1], numbers.starts[i]))
            later = numbers[i]
            if corrected and later.strength == "strong" and later.value != numbers[at].value:
                at, replaced, corrected = i, replaced + 1, False
                how = f"{how}, then corrected"
    else:
        last = range(len(numbers) - 1, max(-1, len(numbers) - 1 - READ_MENTIONS), -1)
        usable = [i for i in last if numbers[i].strength != "rejected"]
        if not usable:
            return Conclusion(None, "no number stated")
        at = next((i for i in usable if numbers[i].strength == "strong"), usable[0])
        how = "the last value stated"
    stated = numbers[at]
    # working, parts, approximations and percentages are never candidates; a hedged aside
    # is stated strongly (_strength): the nearest two strong other values are weighed
    for other in _nearest_others(numbers, at, 2):
        if _alternative(text, stated, other):
            return Conclusion(stated, how, other, replaced)
    return Conclusion(stated, how, None, replaced)


def _nearest_others(numbers: _Numbers, at: int, count: int) -> list[Mention]:
    """Up to `count` strong numbers of another value than numbers[at], nearest first."""
    stated, found = numbers[at], []
    for step in range(1, READ_MENTIONS):
        sides = [i for i in (at - step, at + step) if 0 <= i < len(numbers)]
        if not sides:
            break
        for i in sorted(sides, key=lambda i: abs(numbers.starts[i] - stated.start)):
            other = numbers[i]
            if other.strength == "strong" and other.value != stated.value:
                found.append(other)
        if len(found) >= count:
            break
    return sorted(found, key=lambda m: abs(m.start - stated.start))[:count]
