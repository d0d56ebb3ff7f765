"""The check registry: by the name tasks give in `check.type`, the checker that judges an
answer and the validator of the task's frontmatter. The check modules register into it when
they are imported (benchrig.checks.judge imports them all); spec.py and judge only read it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import Verdict

Checker = Callable[[TaskSpec, Transcript, Settings], Verdict]
# A task's whole frontmatter (schema-valid) → `field: what is wrong` for its check.
Validator = Callable[[Mapping[str, Any]], list[str]]

CHECKERS: dict[str, Checker] = {}
VALIDATORS: dict[str, Validator] = {}


AnyChecker = TypeVar("AnyChecker", bound=Checker)


def checker(name: str) -> Callable[[AnyChecker], AnyChecker]:
    """Register a check type by the name tasks use in `check.type`."""

    def register(func: AnyChecker) -> AnyChecker:
        CHECKERS[name] = func
        return func

    return register


def validator(name: str) -> Callable[[Validator], Validator]:
    """Register what the schema cannot see in the frontmatter of a `name` check."""

    def register(func: Validator) -> Validator:
        VALIDATORS[name] = func
        return func

    return register


def frontmatter_problems(meta: Mapping[str, Any]) -> list[str]:
    """`field: what is wrong` for the check of a schema-valid frontmatter. A check type that
    no module registered is refused (fails closed): whoever loads tasks loads the checks
    first (benchrig.checks.judge.load_checkers), so no rule is skipped unseen."""
    check = meta.get("check") or {}
    kind = check.get("type")
    if kind is None:
        return []
    if kind not in CHECKERS:
        known = ", ".join(sorted(CHECKERS)) or "none: the checks are not loaded"
        return [f"check.type: no check {kind!r} is registered (known: {known})"]
    validate = VALIDATORS.get(kind)
    return validate(meta) if validate is not None else []
