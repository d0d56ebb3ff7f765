"""Pattern rules shared by the answer checks and their frontmatter validators: the accepted
patterns of a check, which patterns an answer misses, and what makes a pattern unusable."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchrig.checks.normalize import normalize

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


def compile_pattern(pattern: str, field: str,
                    problems: list[str]) -> re.Pattern[str] | None:
    """`pattern` compiled (case ignored); None, with `field: why` added to `problems`, when
    it does not compile."""
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        problems.append(f"{field}: {pattern!r} is not a valid regular expression ({exc})")
        return None
