"""The `tests` check: the file the agent wrote, else the code in the answer, against the task's
hidden tests in the sandbox (checks/coding.py runs them)."""

from __future__ import annotations

from benchrig.checks.coding import run_tests
from benchrig.checks.extract import extract_code, truncation_message
from benchrig.checks.guard import model_text
from benchrig.core.check import CheckContext, check
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict, failed_details
from benchrig.sandbox import child_source

EVIDENCE_CHARS = 4000


def preload_sandbox() -> None:
    """The sandbox's child program, read from disk now (before any agent runs)."""
    child_source()


def every_test_failed(task: TaskSpec, reason: str) -> tuple[CheckDetail, ...]:
    """The model's own error (a timeout) fails every assertion, so it never lifts the
    assertion rate (an infrastructure error leaves the checks empty, outside the rate)."""
    return failed_details(task.test_names, reason)


@check("tests", preload=preload_sandbox, unjudged=every_test_failed)
def check_code(task: TaskSpec, transcript: Transcript, settings: Settings,
               context: CheckContext) -> Verdict:
    """Coding: the file the agent wrote, else the code in the answer, against hidden tests."""
    written = transcript.files.get(task.solution_file)
    if written is not None:
        code, source, how = written, "file", "file"
    else:
        # the answer is the model's: what reading it raises fails every assertion (judge)
        with model_text("the answer"):
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
    deadline = context.deadline
    report = run_tests(task, code, context.sandboxes,
                       ends_at=deadline.ends_at if deadline is not None else None)
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
