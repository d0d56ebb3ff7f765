"""Checks by name: built-ins load lazily; plugins use the `benchrig.checks` entry point.

A check type is a `Check` value (benchrig.core.check: made by `@check(name, validate=…)`),
found by the name tasks give in `check.type`. Nothing registers itself on import: whoever
needs a check asks for it here, and `load_checks` loads them all before any driver runs.

Public: this lookup (and `benchrig.core.check`). The check modules here are private to
BenchRig: a plugin check does not import them.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from typing import Any

from benchrig.core.check import Check
from benchrig.core.errors import UsageError
from benchrig.core.plugins import load_target

__all__ = ["BUILTIN", "GROUP", "check_problems", "find_check", "get_check", "known_checks",
           "load_checks"]

GROUP = "benchrig.checks"
BUILTIN = {
    "tests": "benchrig.checks.hidden_tests:check_code",
    "final_answer": "benchrig.checks.answers:check_final_answer",
    "regex": "benchrig.checks.answers:check_regex",
    "exact_or_contains": "benchrig.checks.answers:check_exact_or_contains",
    "declension": "benchrig.checks.polish:check_declension",
    "choices": "benchrig.checks.polish:check_choices",
    "summary": "benchrig.checks.polish:check_summary",
    "tool_calls": "benchrig.checks.tool_calls:check_tool_calls",
    "needle": "benchrig.checks.needle:check_needle",
}


@functools.cache
def _plugins() -> dict[str, str]:
    # read once per process: the runner loads the checks before every attempt
    from importlib.metadata import entry_points

    return {point.name: point.value for point in entry_points(group=GROUP)}


def _target(name: str) -> str | None:
    # a built-in name never reads the installed packages' metadata (it cannot be replaced)
    return BUILTIN.get(name) or _plugins().get(name)


def known_checks() -> list[str]:
    return sorted({**_plugins(), **BUILTIN})


def find_check(name: str) -> Check | None:
    """The check registered as `name`, imported now; None when no package registers it."""
    target = _target(name)
    if target is None:
        return None
    found = load_target("check", name, target)
    if not isinstance(found, Check) or found.name != name:
        raise UsageError(f"check {name!r}: {target} is not a check named {name!r} "
                         "(make it with benchrig.core.check.check)")
    return found


def get_check(name: str) -> Check:
    """The check registered as `name`; UsageError listing the known ones when there is none."""
    found = find_check(name)
    if found is None:
        raise UsageError(f"unknown check {name!r}; known checks: {', '.join(known_checks())}")
    return found


def load_checks(builtins: Collection[str] | None = None) -> dict[str, Check]:
    """Every known check, imported and preloaded (the sandbox's child program for `tests`);
    of the built-in ones only those in `builtins`, when given (every plugin all the same:
    one that cannot load stops a run before anything runs, never skipped unseen).
    The runner calls this before any driver runs, so nothing an agent changes on disk
    afterwards can alter how answers are judged (the hidden tests were read into memory
    when the task was loaded)."""
    names = [name for name in known_checks()
             if builtins is None or name not in BUILTIN or name in builtins]
    checks = {name: get_check(name) for name in names}
    for found in checks.values():
        found.preload()
    return checks


def check_problems(meta: Mapping[str, Any], *, by_window: bool = False) -> list[str]:
    """`field: what is wrong` for the check of a schema-valid frontmatter: an unknown check
    type is refused (fails closed), a known one is validated by its own validator; a check
    judging by window is refused unless the task's suite asks window by window (`by_window`,
    which the loader asks of the suite)."""
    check = meta.get("check") or {}
    kind = check.get("type")
    if kind is None:
        return []
    found = find_check(str(kind))
    if found is None:
        return [f"check.type: no check {kind!r} is registered "
                f"(known: {', '.join(known_checks())})"]
    if found.by_window and not by_window:
        return [f"check.type: the {found.name} check belongs to the context suite (a suite "
                "whose attempt asks window by window)"]
    return found.validate(meta)
