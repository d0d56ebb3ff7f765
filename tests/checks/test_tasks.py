"""The bundled coding suite: its check counts, and a known-good solution passes every task."""

from __future__ import annotations

import pytest

from benchrig.checks.coding import run_tests
from benchrig.spec import load_task
from tests.conftest import SOLUTIONS, TASKS

# suites.md: Nested Dict Flattening (4), Merge Overlapping Intervals (5),
# Valid Balanced Brackets (6), LRU Cache (2).
CODING = {"flatten-dict": 4, "merge-intervals": 5, "valid-brackets": 6, "lru-cache": 2}


@pytest.mark.parametrize(("task_id", "checks"), list(CODING.items()))
def test_known_good_solution_passes_every_check(task_id: str, checks: int) -> None:
    task = load_task(TASKS / f"{task_id}.md")
    assert len(task.test_names) == checks
    report = run_tests(task, (SOLUTIONS / f"{task_id}.py").read_text())
    assert report.total == checks
    assert report.all_passed, [(d.name, d.message) for d in report.details if not d.passed]


@pytest.mark.parametrize("task_id", list(CODING))
def test_an_empty_module_fails_every_check(task_id: str) -> None:
    task = load_task(TASKS / f"{task_id}.md")
    report = run_tests(task, "pass\n")
    assert report.passed == 0 and report.total == CODING[task_id]


def test_a_plausible_bug_fails_only_its_checks() -> None:
    # Merging only strictly overlapping intervals: the touching case must fail alone.
    good = (SOLUTIONS / "merge-intervals.py").read_text()
    buggy = good.replace("start <= merged", "start < merged")
    report = run_tests(load_task(TASKS / "merge-intervals.md"), buggy)
    failed = [d.name for d in report.details if not d.passed]
    assert failed == ["test_touching_intervals_merge"]
