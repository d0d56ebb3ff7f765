"""The sandbox's child does only the work the judge reads: a failing answer costs no more."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchrig.checks.coding import run_tests
from benchrig.core.task import TaskSpec
from benchrig.spec import test_names_of as names_of

# A broken answer, as `benchrig import humaneval` writes one, plus a probe of the child.
BROKEN = """
def add(a, b):
    raise NotImplementedError

def child_imported(name):
    import sys
    return name in sys.modules
"""
TESTS = """
from solution import add, child_imported

def test_add_fails():
    try:
        add(1, 2)
    except NotImplementedError:
        pass

def test_the_failure_cost_the_child_no_traceback_module():
    assert child_imported("traceback") is False
    assert child_imported("linecache") is False
"""


def task() -> TaskSpec:
    folder = Path("/nonexistent/child-work")
    return TaskSpec(id="child-work", suite="coding", language="python", difficulty="easy",
                    tags=(), timeout_s=60, title="child work", body="add(a, b)",
                    path=folder / "child-work.md", task_hash="child-work",
                    check_timeout_s=10.0, entry_points=("add",),
                    test_path=folder / "child-work.test.py", test_source=TESTS,
                    test_names=names_of(TESTS))


@pytest.mark.slow
def test_a_failing_answer_makes_the_child_format_no_traceback() -> None:
    # Before: every exception the candidate raised imported `traceback` (and with it
    # linecache, tokenize, re: ~7 ms of the sandbox's CPU) and formatted a traceback from
    # the candidate's source into the reply, which the judge never read.
    report = run_tests(task(), BROKEN)
    assert report.sandbox_error is None, report.sandbox_error
    assert [d.passed for d in report.details] == [True, True], report.details
