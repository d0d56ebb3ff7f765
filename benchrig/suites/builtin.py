"""The built-in suites: speed, coding, reasoning, context, polish, tool_use, load
(docs/suites.md)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from benchrig.core.task import TEST_SUFFIX
from benchrig.suites.base import Suite, SuiteReport
from benchrig.suites.shapes import conversation, single_answer, sweep_only, window_ladder

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
    from benchrig.haystack import filler_problems

    return filler_problems(body) if body else []  # the body is the filler, not a prompt


def _load_problems(meta: Mapping[str, Any], body: str) -> list[str]:
    # the schema checks each field of `load`; these are the combinations it cannot state
    found = meta.get("load")
    spec: Mapping[str, Any] = found if isinstance(found, dict) else {}  # none: the defaults
    problems = []
    prompts = spec.get("prompts", "body")
    if prompts == "body" and not body.strip():
        problems.append("load.prompts: body, but the task's body is empty")
    if prompts != "synthetic":
        problems += [f"load.{key}: only for prompts: synthetic"
                     for key in ("prompt_tokens", "prompt_sigma", "prompt_count")
                     if key in spec]
    if "concurrency" in spec and "rate" in spec:
        problems.append("load: give one sweep, concurrency or rate")
    if "arrivals" in spec and "rate" not in spec:
        problems.append("load.arrivals: only with a rate sweep")
    if meta.get("check") is not None:
        problems.append("check: a load task measures the server; it has nothing to check")
    return problems


# The report facets: each suite's line, its score and its own figures (resolved by name from
# benchrig.report.panels when a summary is rendered, so running a suite never loads the report).
PANELS = "benchrig.report.panels"
SPEED_REPORT = SuiteReport(rated=False, order=0, panel=f"{PANELS}:SPEED")
CODING_REPORT = SuiteReport(by_checks=True, composite=True, pass_at_k=True, order=1,
                            panel=f"{PANELS}:CODING")
REASONING_REPORT = SuiteReport(composite=True, order=2)
CONTEXT_REPORT = SuiteReport(by_checks=True, composite=True, order=3, panel=f"{PANELS}:CONTEXT")
POLISH_REPORT = SuiteReport(composite=True, order=4)
# several unstreamed requests per attempt, not one timed generation: out of the timing means
TOOL_USE_REPORT = SuiteReport(timed=False, order=5, panel=f"{PANELS}:TOOL_USE")
# a sweep's levels are distributions over many requests: their own section (report/load_curves.py)
LOAD_REPORT = SuiteReport(timed=False, levels=True, order=6)

# speed and context measure the engine (they generate to the limit on purpose): thinking off,
# nothing truncated; the others check their answer
SPEED = Suite("speed", single_answer, exclusive=True, think=False, report=SPEED_REPORT)
CODING = Suite("coding", single_answer, _coding_problems, hidden_tests=True,
               system=CODING_SYSTEM, instructions=CODING_INSTRUCTIONS, answer_scored=True,
               report=CODING_REPORT)
REASONING = Suite("reasoning", single_answer, answer_scored=True, report=REASONING_REPORT)
CONTEXT = Suite("context", window_ladder, _context_problems, exclusive=True, think=False,
                by_window=True, report=CONTEXT_REPORT)
POLISH = Suite("polish", single_answer, answer_scored=True, report=POLISH_REPORT)
TOOL_USE = Suite("tool_use", conversation, opt_in=True, system=TOOL_SYSTEM,
                 answer_scored=True, report=TOOL_USE_REPORT)
# A sweep is many measured levels, one result each, not one planned attempt: `run` routes
# it to benchrig.cli.load (docs/writing-a-suite.md#a-suite-that-is-not-one-attempt).
# Exclusive: its figures are the server's timings under a known load, nothing beside it.
LOAD = Suite("load", sweep_only, _load_problems, exclusive=True, opt_in=True,
             report=LOAD_REPORT)
