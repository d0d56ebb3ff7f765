"""Transcript → verdict: dispatches on the task's check type (coding tests, answer rules)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from benchrig.checks.coding import CheckDetail, failed_details, run_tests
from benchrig.checks.extract import extract_code, truncation_message
from benchrig.drivers.base import Settings, Transcript
from benchrig.sandbox import SandboxPool, child_source
from benchrig.spec import TaskSpec

EVIDENCE_CHARS = 4000


@dataclass(frozen=True)
class Verdict:
    """What the check decided, with the evidence a reader needs to audit it."""

    result: str  # pass | fail | no-test
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


Checker = Callable[[TaskSpec, Transcript, Settings], Verdict]
CHECKERS: dict[str, Checker] = {}
# Modules whose checkers register themselves on import (see load_checkers).
BUILTIN_MODULES = ("benchrig.checks.answers", "benchrig.checks.polish")


AnyChecker = TypeVar("AnyChecker", bound=Checker)


def checker(name: str) -> Callable[[AnyChecker], AnyChecker]:
    """Register a check type by the name tasks use in `check.type`."""

    def register(func: AnyChecker) -> AnyChecker:
        CHECKERS[name] = func
        return func

    return register


@checker("tests")
def check_code(task: TaskSpec, transcript: Transcript, settings: Settings,
               sandboxes: SandboxPool | None = None) -> Verdict:
    """Coding: the file the agent wrote, else the code in the answer, against hidden tests
    run in `sandboxes` (see run_tests for the default)."""
    written = transcript.files.get(task.solution_file)
    if written is not None:
        code, source, how = written, "file", "file"
    else:
        found = extract_code(transcript.answer, task.entry_points,
                             hit_token_limit=transcript.finish_reason == "length")
        if found.code is None:
            if found.truncated:
                message = truncation_message(settings.max_tokens)
                return Verdict("fail", failed_details(task.test_names, message), message,
                               truncated=True)
            message = "no code found in the response"
            return Verdict("fail", failed_details(task.test_names, message), message,
                           code_source="message")
        code, source, how = found.code, "message", found.how
    report = run_tests(task, code, sandboxes)
    notes = f"{report.passed}/{report.total} checks passed"
    if report.sandbox_error:
        notes += f"; {report.sandbox_error}"
    return Verdict(
        result="pass" if report.all_passed else "fail",
        details=report.details,
        notes=notes,
        isolation=report.isolation,
        code_source=source,
        sandbox_error=report.sandbox_error,
        evidence={
            "extraction": how,
            "code_chars": len(code),
            "stdout": report.stdout[:EVIDENCE_CHARS],
            "stderr": report.stderr[:EVIDENCE_CHARS],
            "sandbox": report.sandbox,
        },
    )


def load_checkers() -> None:
    """Import every checker module and read the sandbox's child program now. The runner calls
    this before any driver runs, so nothing an agent changes on disk afterwards can alter how
    answers are judged (the hidden tests were read into memory when the task was loaded)."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    child_source()


def judge(task: TaskSpec, transcript: Transcript, settings: Settings,
          sandboxes: SandboxPool | None = None) -> Verdict:
    """The verdict on `transcript`; candidate code runs in `sandboxes`, the run's pool."""
    load_checkers()  # already done by the runner; a no-op then
    kind = task.check_type
    if kind is None:
        return Verdict("no-test", notes="the task has no check")
    if kind == "tests":  # the one check that runs candidate code: it gets the run's sandboxes
        return check_code(task, transcript, settings, sandboxes)
    check = CHECKERS.get(kind)
    if check is None:
        raise ValueError(f"{task.path}: check.type: unknown check {kind!r}")
    return check(task, transcript, settings)
