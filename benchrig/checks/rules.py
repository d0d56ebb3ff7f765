"""What the schema cannot see in a task's answer check: patterns that do not compile, unbounded
gaps, and an `expected` answer that the task's own patterns would reject (one validator per
check type, registered in core.registry)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchrig.checks.normalize import normalize, tail
from benchrig.core.registry import validator

# `.*`, `.+`, `.{2,}` (lazy or not): a gap that lets scattered mentions add up to a match.
UNBOUNDED_GAP = re.compile(r"(?<!\\)\.(?:\*|\+|\{\d*,\})")


def accepted_patterns(check: Mapping[str, Any], expected: str) -> list[str]:
    """A final_answer check's patterns: its `accept` list, else the expected answer itself."""
    return list(check.get("accept") or [re.escape(normalize(expected))])


def pattern_misses(patterns: list[str], subjects: list[str] | None,
                   conclusion: str) -> list[int]:
    """The patterns (numbered from 1) that `conclusion` does not satisfy. A pattern with a
    subject (`box 1` for `box 1 … oranges`) must match where that subject is stated last,
    so a statement the answer later replaces does not count; without one, anywhere."""
    missing = []
    for number, pattern in enumerate(patterns, 1):
        compiled = re.compile(pattern, re.IGNORECASE)
        if subjects is None:
            found = compiled.search(conclusion) is not None
        else:
            starts = [m.start() for m in re.finditer(subjects[number - 1], conclusion,
                                                     re.IGNORECASE)]
            found = bool(starts) and compiled.match(conclusion, starts[-1]) is not None
        if not found:
            missing.append(number)
    return missing


def _compile(pattern: str, field: str, problems: list[str]) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        problems.append(f"{field}: {pattern!r} is not a valid regular expression ({exc})")
        return None


def _expected(meta: Mapping[str, Any]) -> list[str]:
    kind = meta["check"]["type"]
    if not isinstance(meta.get("expected"), str):
        return [f"expected: a {kind} check needs the expected answer (a quoted string)"]
    return []


@validator("exact_or_contains")
def exact_or_contains_problems(meta: Mapping[str, Any]) -> list[str]:
    return _expected(meta)


@validator("final_answer")
def final_answer_problems(meta: Mapping[str, Any]) -> list[str]:
    """Every accepted pattern compiles, and one of them accepts the expected answer."""
    problems = _expected(meta)
    if problems:
        return problems
    check, expected = meta["check"], str(meta["expected"])
    accept = accepted_patterns(check, expected)
    compiled = [_compile(p, f"check.accept[{i}]", problems) for i, p in enumerate(accept)]
    if not problems and not any(c.fullmatch(normalize(expected)) for c in compiled
                                if c is not None):
        problems.append(f"check.accept: no pattern accepts the expected answer "
                        f"{expected!r} (patterns see it as {normalize(expected)!r})")
    return problems


@validator("regex")
def regex_problems(meta: Mapping[str, Any]) -> list[str]:
    """Patterns (and subjects) compile, have bounded gaps, and fit the expected answer."""
    problems = _expected(meta)
    if problems:
        return problems
    check, expected = meta["check"], str(meta["expected"])
    patterns = list(check.get("patterns", []))
    subjects = check.get("subjects")
    fields = [(f"check.patterns[{i}]", p) for i, p in enumerate(patterns)]
    if subjects is not None:
        fields += [(f"check.subjects[{i}]", p) for i, p in enumerate(subjects)]
        if len(subjects) != len(patterns):
            problems.append(f"check.subjects: {len(subjects)} subjects for "
                            f"{len(patterns)} patterns (one per pattern, in order)")
    for field, pattern in fields:
        _compile(pattern, field, problems)
        if UNBOUNDED_GAP.search(pattern):
            problems.append(f"{field}: {pattern!r} has an unbounded gap "
                            "(.* or .+); use a bounded one such as (?:\\w+ ){0,3}")
    missing = [] if problems else pattern_misses(patterns, subjects, tail(expected))
    if missing:
        problems.append(f"check.patterns: the expected answer {expected!r} does not match "
                        f"pattern {', '.join(map(str, missing))} (where its subject is "
                        "stated last, when it has one)")
    return problems


@validator("summary")
def summary_problems(meta: Mapping[str, Any]) -> list[str]:
    """Every fact's patterns compile; min_words is not above max_words."""
    check = meta["check"]
    problems: list[str] = []
    for i, fact in enumerate(check.get("facts", [])):
        for j, pattern in enumerate(fact.get("any", [])):
            _compile(pattern, f"check.facts[{i}].any[{j}]", problems)
    low, high = check.get("min_words"), check.get("max_words")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        problems.append(f"check.min_words: {low} is above max_words {high}")
    return problems
