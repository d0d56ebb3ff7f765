"""What a check decides: one CheckDetail per check, and the attempt's Verdict."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckDetail:
    name: str
    passed: bool
    message: str
    duration_s: float


def failed_details(names: Iterable[str], message: str) -> tuple[CheckDetail, ...]:
    """Every check in `names` failed, for one reason (nothing was run)."""
    return tuple(CheckDetail(name, False, message, 0.0) for name in names)


@dataclass(frozen=True)
class Verdict:
    """What the check decided, with the evidence a reader needs to audit it."""

    result: str  # pass | fail | no-test | unsupported (tool use)
    details: tuple[CheckDetail, ...] = ()
    notes: str = ""
    truncated: bool = False
    truncated_thinking: bool = False
    isolation: str | None = None
    code_source: str | None = None
    sandbox_error: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(d.passed for d in self.details)
