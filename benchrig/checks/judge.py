"""Transcript → verdict: dispatches on the task's check type (coding tests, answer rules)."""

from __future__ import annotations

from benchrig.checks import answers, polish, rules
from benchrig.checks.coding import run_tests
from benchrig.checks.extract import extract_code, truncation_message
from benchrig.core.registry import CHECKERS, checker
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import Verdict, failed_details
from benchrig.sandbox import SandboxPool, child_source

EVIDENCE_CHARS = 4000
# The modules whose checkers and validators register themselves on import (core.registry).
BUILTIN_MODULES = (answers, polish, rules)


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
    """Every checker is registered (imported with this module) and the sandbox's child
    program is read now. The runner calls this before any driver runs, so nothing an agent
    changes on disk afterwards can alter how answers are judged (the hidden tests were read
    into memory when the task was loaded); whoever loads tasks calls it first, since the
    task's check is validated by what the checks registered."""
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
