"""Unbounded gaps in a regular expression, read from its parse tree rather than its text.

A gap is a repeat with no upper bound of something that matches both a letter and a space:
it can skip any number of words (`.*`, `.+`, `.{2,}`, `[^.]*`, `\\D+`, `(?:\\w+ )*`). A repeat
that stays inside a word (`\\w+`) or inside spacing (`\\s*`) is not one.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]
from typing import Any

_CATEGORIES = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
               C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W"}
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
PROBES = ("a", " ")


def _in_set(items: Any, char: str) -> bool:
    negated = any(op is C.NEGATE for op, _ in items)
    hit = any((op is C.LITERAL and chr(av) == char)
              or (op is C.RANGE and av[0] <= ord(char) <= av[1])
              or (op is C.CATEGORY and re.fullmatch(_CATEGORIES[av], char) is not None)
              for op, av in items)
    return hit != negated


def _can_match(items: Any, char: str) -> bool:
    """Whether some element of the parsed `items` can match `char` (over-approximated)."""
    for op, av in items:
        if (op is C.ANY
                or (op is C.LITERAL and chr(av) == char)
                or (op is C.NOT_LITERAL and chr(av) != char)
                or (op is C.IN and _in_set(av, char))
                or (op is C.CATEGORY and re.fullmatch(_CATEGORIES[av], char) is not None)
                or (op is C.SUBPATTERN and _can_match(av[-1], char))
                or (op in _REPEATS and _can_match(av[2], char))
                or (op is C.BRANCH and any(_can_match(b, char) for b in av[1]))):
            return True
    return False


def _children(op: Any, av: Any) -> list[Any]:
    if op is C.SUBPATTERN:
        return [av[-1]]
    if op in _REPEATS:
        return [av[2]]
    if op is C.BRANCH:
        return list(av[1])
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [av[1]]
    return []


def unbounded_gaps(pattern: str) -> int:
    """How many unbounded gaps `pattern` has."""
    found = 0

    def visit(items: Any) -> None:
        nonlocal found
        for op, av in items:
            if (op in _REPEATS and av[1] == C.MAXREPEAT
                    and all(_can_match(av[2], char) for char in PROBES)):
                found += 1
            for child in _children(op, av):
                visit(child)

    visit(parser.parse(pattern))
    return found
