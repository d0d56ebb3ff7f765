"""The built-in suites: speed, coding, reasoning, context, polish, tool_use (docs/suites.md)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from benchrig.spec import TEST_SUFFIX
from benchrig.suites.base import Suite
from benchrig.suites.shapes import conversation, single_answer, window_ladder

CODING_SYSTEM = "You are an expert Python programmer."
CODING_INSTRUCTIONS = MappingProxyType({
    "chat": "Reply with the complete solution as one Python module in a single ```python code "
            "block. Do not include tests or example usage.",
    "agent": "Write the complete solution to the file `{file}` in the current directory. It "
             "must be importable as a module. Do not write tests; do not ask questions.",
})
# Some chat handlers show the tools only inside a system message (llama-cpp-python's
# chatml-function-calling): every runtime gets the same one.
TOOL_SYSTEM = ("You are a helpful assistant with access to tools. Call a tool only when it "
               "serves the request; otherwise answer directly in plain text.")


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
CODING = Suite("coding", single_answer, _coding_problems, hidden_tests=True,
               system=CODING_SYSTEM, instructions=CODING_INSTRUCTIONS)
REASONING = Suite("reasoning", single_answer)
CONTEXT = Suite("context", window_ladder, _context_problems, exclusive=True)
POLISH = Suite("polish", single_answer)
TOOL_USE = Suite("tool_use", conversation, opt_in=True, system=TOOL_SYSTEM)
