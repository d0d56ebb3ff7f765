"""Suites by name: built-ins load lazily; plugins use the `benchrig.suites` entry point.

A suite is a `Suite` value (benchrig.suites.base), found by the name tasks give in `suite`.
The runner, the plan and the task loader ask the task's suite here; none of them branches on
a suite's name. Public: this lookup, `benchrig.suites.base` (the contract) and
`benchrig.suites.shapes` (the built-in attempt shapes a plugin suite may reuse).

The name lists below repeat, for callers outside, what the built-in suites declare (their
`answer_scored`, their report facet's `composite`, `timed`, `levels`; tests/suites/
test_registry.py holds the two equal): BenchRig's own code asks the suite, never a list.
"""

from __future__ import annotations

import functools

from benchrig.core.errors import UsageError
from benchrig.core.plugins import load_target
from benchrig.suites.base import Suite
from benchrig.textsafe import printable

__all__ = ["ANSWER_SCORED", "BUILTIN", "COMPOSITE", "GROUP", "LEVELS", "OPT_IN", "SUITES",
           "UNTIMED", "find_suite", "get_suite", "known_suites", "unregistered"]

GROUP = "benchrig.suites"
BUILTIN = {
    "speed": "benchrig.suites.builtin:SPEED",
    "coding": "benchrig.suites.builtin:CODING",
    "reasoning": "benchrig.suites.builtin:REASONING",
    "context": "benchrig.suites.builtin:CONTEXT",
    "polish": "benchrig.suites.builtin:POLISH",
    "tool_use": "benchrig.suites.builtin:TOOL_USE",
    "load": "benchrig.suites.builtin:LOAD",
}
SUITES = tuple(BUILTIN)
# Suites whose answer is checked: a response cut off at the token limit is `truncated` here,
# while speed and context generate to the limit on purpose; a thinking model's budget is
# multiplied in these (a tool turn's trace comes before its call too).
ANSWER_SCORED = ("coding", "reasoning", "polish", "tool_use")
# Suites averaged into the composite score (speed measures, tool metrics stay out).
COMPOSITE = ("coding", "reasoning", "polish", "context")
# Suites left out of the legacy timing averages (per-model table, the model's avg TTFT):
# tool conversations are several unstreamed requests, not one timed generation; a load level
# is a distribution over many requests (its own section: benchrig.report.load_curves).
UNTIMED = ("tool_use", "load")
# Suites whose results are levels of a sweep, not pass/fail attempts (no verdict, checks
# 0/0): out of every group, pass rate, scorecard and attempt count; their own section shows
# them (benchrig.report.load_curves).
LEVELS = ("load",)
# Suites run only when asked for by name (--suite or a task id), never by default.
OPT_IN = ("tool_use", "load")


@functools.cache
def _plugins() -> dict[str, str]:
    # read only for a name no built-in has, once per process: scanning the installed
    # packages costs ~25 ms, and a plugin suite is asked for at every attempt
    from importlib.metadata import entry_points

    return {point.name: point.value for point in entry_points(group=GROUP)}


def known_suites() -> tuple[str, ...]:
    """The built-in suites in their order, then those installed packages register."""
    return (*SUITES, *sorted(set(_plugins()) - set(BUILTIN)))


def find_suite(name: str) -> Suite | None:
    """The suite registered as `name`, imported now; None when no package registers it. A
    plugin never shadows a built-in."""
    target = BUILTIN.get(name) or _plugins().get(name)
    if target is None:
        return None
    found = load_target("suite", name, target)
    if not isinstance(found, Suite) or found.name != name:
        raise UsageError(f"suite {printable(name)!r}: {printable(target)} is not a suite "
                         f"named {printable(name)!r} (make it with benchrig.suites.base.Suite)")
    return found


def get_suite(name: str) -> Suite:
    """The suite registered as `name`; UsageError listing the known ones when there is none."""
    found = find_suite(name)
    if found is None:
        raise UsageError(f"unknown suite {printable(name)!r}; known suites: "
                         f"{', '.join(known_suites())}")
    return found


def unregistered(name: str) -> str:
    """The problem of a task naming a suite nobody registers, naming the known ones."""
    return f"suite: no suite {name!r} is registered (known: {', '.join(known_suites())})"
