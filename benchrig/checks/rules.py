"""What the schema cannot see in a task's answer check: patterns that do not compile, unbounded
gaps, and an `expected` answer that the task's own patterns would reject."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchrig.checks.normalize import normalize, tail

# `.*`, `.+`, `.{2,}` (lazy or not): a gap that lets scattered mentions add up to a match.
UNBOUNDED_GAP = re.compile(r"(?<!\\)\.(?:\*|\+|\{\d*,\})")
EXPECTS_ANSWER = ("final_answer", "regex", "exact_or_contains")


def accepted_patterns(check: Mapping[str, Any], expected: str) -> list[str]:
    """A final_answer check's patterns: its `accept` list, else the expected answer itself."""
    return list(check.get("accept") or [re.escape(normalize(expected))])


def _compile(pattern: str, field: str, problems: list[str]) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        problems.append(f"{field}: {pattern!r} is not a valid regular expression ({exc})")
        return None


def check_problems(meta: dict[str, Any]) -> list[str]:
    """`field: what is wrong` for the answer check of a schema-valid frontmatter."""
    check = meta.get("check") or {}
    kind = check.get("type")
    problems: list[str] = []
    expected = meta.get("expected")
    if kind in EXPECTS_ANSWER and not isinstance(expected, str):
        return [f"expected: a {kind} check needs the expected answer (a quoted string)"]
    if kind == "final_answer":
        accept = accepted_patterns(check, str(expected))
        compiled = [_compile(p, f"check.accept[{i}]", problems) for i, p in enumerate(accept)]
        if not problems and not any(c.fullmatch(normalize(str(expected))) for c in compiled
                                    if c is not None):
            problems.append(f"check.accept: no pattern accepts the expected answer "
                            f"{expected!r} (patterns see it as {normalize(str(expected))!r})")
    elif kind == "regex":
        patterns = check.get("patterns", [])
        compiled = [_compile(p, f"check.patterns[{i}]", problems)
                    for i, p in enumerate(patterns)]
        for i, pattern in enumerate(patterns):
            if UNBOUNDED_GAP.search(pattern):
                problems.append(f"check.patterns[{i}]: {pattern!r} has an unbounded gap "
                                "(.* or .+); use a bounded one such as (?:\\w+ ){0,3}")
        conclusion = tail(str(expected))
        if not problems and not all(c.search(conclusion) for c in compiled if c is not None):
            problems.append(f"check.patterns: the expected answer {expected!r} does not match "
                            "every pattern")
    elif kind == "summary":
        for i, fact in enumerate(check.get("facts", [])):
            for j, pattern in enumerate(fact.get("any", [])):
                _compile(pattern, f"check.facts[{i}].any[{j}]", problems)
        low, high = check.get("min_words"), check.get("max_words")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            problems.append(f"check.min_words: {low} is above max_words {high}")
    return problems
