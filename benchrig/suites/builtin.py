"""The built-in suites: speed, coding, reasoning, context, polish, tool_use (docs/suites.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchrig.spec import TEST_SUFFIX
from benchrig.suites.base import Suite
from benchrig.suites.shapes import conversation, single_answer, window_ladder


def _coding_problems(meta: Mapping[str, Any], body: str) -> list[str]:
    check = meta.get("check")
    kind = check.get("type") if isinstance(check, dict) else None
    if kind in (None, "tests"):
        return []
    return [f"check.type: coding tasks are checked by their tests "
            f"({meta.get('id')}{TEST_SUFFIX}), not by {kind!r}"]


def _context_problems(meta: Mapping[str, Any], body: str) -> list[str]:
    from benchrig.needle import filler_problems

    return filler_problems(body) if body else []  # the body is the filler, not a prompt


SPEED = Suite("speed", single_answer, exclusive=True)
CODING = Suite("coding", single_answer, _coding_problems, hidden_tests=True)
REASONING = Suite("reasoning", single_answer)
CONTEXT = Suite("context", window_ladder, _context_problems, exclusive=True)
POLISH = Suite("polish", single_answer)
TOOL_USE = Suite("tool_use", conversation, opt_in=True)
