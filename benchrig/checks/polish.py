"""Polish suite checks: `declension` (seven cases), `choices` (idiom matching) and `summary`
(word limit and required facts). Deterministic: listed accepted forms, counted words."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchrig.checks.answers import (
    EXTRACT_CHARS,
    final_answer_value,
    no_answer,
    truncation_note,
)
from benchrig.checks.guard import model_text
from benchrig.checks.normalize import clean, collapse, final_text
from benchrig.checks.rules import compile_pattern
from benchrig.core.check import CheckContext, check
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict, failed_details

# The seven cases in their canonical order, with the names a model may use for them.
CASES: dict[str, tuple[str, ...]] = {
    "mianownik": ("mianownik", "nominative", "nominativus"),
    "dopełniacz": ("dopełniacz", "dopelniacz", "genitive", "genetivus", "genitivus"),
    "celownik": ("celownik", "dative", "dativus"),
    "biernik": ("biernik", "accusative", "accusativus"),
    "narzędnik": ("narzędnik", "narzednik", "instrumental", "instrumentalis"),
    "miejscownik": ("miejscownik", "locative", "locativus", "prepositional"),
    "wołacz": ("wołacz", "wolacz", "vocative", "vocativus"),
}
# Abbreviations count only at the start of a line followed by "." or ":" ("Ms.: …").
ABBREVIATIONS = {"m": "mianownik", "d": "dopełniacz", "c": "celownik", "b": "biernik",
                 "n": "narzędnik", "ms": "miejscownik", "msc": "miejscownik", "w": "wołacz",
                 "wol": "wołacz"}
ALIAS = {alias: case for case, aliases in CASES.items() for alias in aliases}
_ALIAS_RE = re.compile(r"(?<!\w)(" + "|".join(sorted(ALIAS, key=len, reverse=True)) + r")(?!\w)",
                       re.IGNORECASE)
_LEAD = re.compile(r"^[\s|>*#\-–—•·\d.)]*")
_ABBREVIATION = re.compile(r"^(" + "|".join(ABBREVIATIONS) + r")\s*[.:]", re.IGNORECASE)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
# Helpers a declension table shows beside a form: case questions, prepositions, "o!".
QUESTION_WORDS = {"kto", "co", "kogo", "czego", "komu", "czemu", "kim", "czym"}
LEADING_WORDS = {"z", "ze", "o"}


def reduce_form(segment: str) -> str:
    """A table cell or line remainder → the bare form: no brackets, no case questions, no
    leading preposition or "o!", lowercase, single spaces."""
    words = collapse(_BRACKETS.sub(" ", segment)).lower().split()
    words = [w for w in words if w not in QUESTION_WORDS]
    while words and words[0] in LEADING_WORDS:
        words = words[1:]
    return " ".join(words)


def case_lines(answer: str) -> dict[str, str]:
    """case → the form given for it on the last line that starts with that case's name.

    A line starts with a case name after list numbers, bullets or a table pipe
    ("3. Celownik (komu?): …", "| Celownik | … |"); further names on the same line start
    further segments ("| Dative | Celownik | …").
    """
    found: dict[str, str] = {}
    for raw in clean(answer).splitlines():
        line = _LEAD.sub("", raw)
        abbreviation = _ABBREVIATION.match(line)
        if abbreviation:
            case = ABBREVIATIONS[abbreviation.group(1).lower()]
            rest = line[abbreviation.end():]
            names = list(_ALIAS_RE.finditer(rest))
            form = reduce_form(rest[: names[0].start()] if names else rest)
            if form:
                found[case] = form
            continue
        names = list(_ALIAS_RE.finditer(line))
        if not names or names[0].start() != 0:
            continue
        for index, name in enumerate(names):
            end = names[index + 1].start() if index + 1 < len(names) else len(line)
            form = reduce_form(line[name.end():end])
            if form:
                found[ALIAS[name.group(1).lower()]] = form
    return found


def _verdict(kind: str, details: list[CheckDetail], evidence: dict[str, Any],
             transcript: Transcript, settings: Settings) -> Verdict:
    passed = bool(details) and all(d.passed for d in details)
    right = sum(d.passed for d in details)
    notes = f"{right}/{len(details)} {kind} checks passed"
    truncated = transcript.finish_reason == "length" and not passed
    if truncated:
        notes = truncation_note(settings, notes)
    return Verdict("pass" if passed else "fail", tuple(details), notes, truncated=truncated,
                   evidence=evidence)


@check("declension")
def check_declension(task: TaskSpec, transcript: Transcript, settings: Settings,
                     context: CheckContext) -> Verdict:
    """Each of the seven cases must be given one of its accepted forms, exactly (diacritics
    included, letter case ignored)."""
    accepted: dict[str, list[str]] = {k: list(v) for k, v in task.check["cases"].items()}
    answer = final_text(transcript.answer, transcript.thinking)
    empty = no_answer("declension", list(accepted), answer, transcript, settings)
    if empty is not None:
        return empty
    with model_text("the answer"):  # a crash on it fails the check (checks.guard)
        given = case_lines(answer.text)
    details = []
    for case, forms in accepted.items():
        form = given.get(case)
        if form is None:
            details.append(CheckDetail(case, False, "no line for this case", 0.0))
        elif form in (f.lower() for f in forms):
            details.append(CheckDetail(case, True, f"{form!r} accepted", 0.0))
        else:
            details.append(CheckDetail(case, False,
                                       f"{form!r} is not an accepted form ({' / '.join(forms)})",
                                       0.0))
    return _verdict("declension", details, {"check": "declension", "forms": given},
                    transcript, settings)


PAIR = re.compile(r"(?<![\w.])(\d{1,2}) ?([a-z])(?!\w)", re.IGNORECASE)


def choice_pairs(value: str) -> dict[str, set[str]]:
    """`1-C, 2: A, (3) e, 4B` → {"1": {"C"}, "2": {"A"}, "3": {"E"}, "4": {"B"}}."""
    pairs: dict[str, set[str]] = {}
    for item, letter in PAIR.findall(collapse(value)):
        pairs.setdefault(item, set()).add(letter.upper())
    return pairs


@check("choices")
def check_choices(task: TaskSpec, transcript: Transcript, settings: Settings,
                  context: CheckContext) -> Verdict:
    """Matching items to lettered options, read from the last `Final answer:` line; an item
    given two different letters is wrong."""
    expected = {str(k): str(v).upper() for k, v in task.check["answers"].items()}
    names = [f"item {k}" for k in expected]
    answer = final_text(transcript.answer, transcript.thinking)
    empty = no_answer("choices", names, answer, transcript, settings)
    if empty is not None:
        return empty
    with model_text("the answer"):
        value = final_answer_value(answer.text)
    if value is None:
        message = "no 'Final answer:' line: no answer"
        return _verdict("choices", list(failed_details(names, message)),
                        {"check": "choices", "extracted": None}, transcript, settings)
    with model_text("the final answer line"):
        given = choice_pairs(value)
    details = []
    for item, letter in expected.items():
        got = sorted(given.get(item, set()))
        ok = got == [letter]
        message = ("correct" if ok else "not answered" if not got
                   else f"answered {'/'.join(got)}, expected {letter}")
        details.append(CheckDetail(f"item {item}", ok, message, 0.0))
    return _verdict("choices", details, {"check": "choices", "extracted": value[-EXTRACT_CHARS:]},
                    transcript, settings)


_LABEL = re.compile(r"^\s*(?:streszczenie|summary)\s*:\s*", re.IGNORECASE)
_COUNTED = re.compile(r"[^\W_]")


def count_words(text: str) -> int:
    """Words as the task states the limit: pieces of text between spaces that hold at least
    one letter or digit ("12-milionowa" is one word, a lone dash is none)."""
    return sum(1 for piece in text.split() if _COUNTED.search(piece))


def summary_text(answer: str) -> str:
    """The summary as written: Markdown removed and a leading `Streszczenie:` label dropped."""
    return _LABEL.sub("", clean(answer).strip())


def summary_problems(meta: Mapping[str, Any]) -> list[str]:
    """Every fact's patterns compile; min_words is not above max_words."""
    check = meta["check"]
    problems: list[str] = []
    for i, fact in enumerate(check.get("facts", [])):
        for j, pattern in enumerate(fact.get("any", [])):
            compile_pattern(pattern, f"check.facts[{i}].any[{j}]", problems)
    low, high = check.get("min_words"), check.get("max_words")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        problems.append(f"check.min_words: {low} is above max_words {high}")
    return problems


@check("summary", validate=summary_problems)
def check_summary(task: TaskSpec, transcript: Transcript, settings: Settings,
                  context: CheckContext) -> Verdict:
    """Word count within the stated limits, and every required fact present."""
    facts: list[dict[str, Any]] = list(task.check.get("facts") or [])
    low, high = task.check.get("min_words"), task.check["max_words"]
    names = ["word count", *(f"fact: {f['name']}" for f in facts)]
    answer = final_text(transcript.answer, transcript.thinking)
    empty = no_answer("summary", names, answer, transcript, settings)
    if empty is not None:
        return empty
    with model_text("the answer"):
        text = summary_text(answer.text)
        words = count_words(text)
        subject = collapse(text)
    within = words <= high and (low is None or words >= low)
    limit = f"{low}–{high}" if low is not None else f"at most {high}"
    details = [CheckDetail("word count", within, f"{words} words ({limit} allowed)", 0.0)]
    for fact in facts:
        hit = next((p for p in fact["any"]
                    if re.search(rf"(?<!\w)(?:{p})(?!\w)", subject, re.IGNORECASE)), None)
        details.append(CheckDetail(f"fact: {fact['name']}", hit is not None,
                                   "present" if hit else "missing", 0.0))
    return _verdict("summary", details, {"check": "summary", "words": words,
                                         "extracted": text[-EXTRACT_CHARS:]}, transcript, settings)
