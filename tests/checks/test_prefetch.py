"""One round trip per problem: the calls of one-assertion checks go to the sandbox as one
batch with the import, each reply read by its own check under its own deadline; a hostile or
stateful candidate gets exactly the verdicts it got one call at a time (issue 27)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig import sandbox
from benchrig.checks.coding import run_tests
from benchrig.checks.prefetch import predicted_calls
from benchrig.core.task import TaskSpec
from benchrig.sandbox import Limits, SandboxPool
from benchrig.sandbox.process import CandidateProcess
from benchrig.spec import load_task

LIMITS = Limits(cpu_s=10, address_space_mb=512, processes=24, scratch_mb=4)
# As `benchrig import humaneval` writes a problem: one check per assertion.
TESTS = '''from solution import add

def test_assert_01() -> None:
    candidate = add
    assert candidate(1, 2) == 3, "1 2"


def test_assert_02() -> None:
    candidate = add
    assert candidate(2, 2) == 4


def test_assert_03() -> None:
    candidate = add
    assert candidate(-1, 1) == 0


def test_assert_04() -> None:
    candidate = add
    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9


def test_assert_05() -> None:
    candidate = add
    assert candidate("a", "b") == "ab"
'''


def task_in(tmp_path: Path, tests: str = TESTS, timeout_s: float = 2.0) -> TaskSpec:
    (tmp_path / "batch.md").write_text(
        "---\nid: batch\nsuite: coding\nlanguage: python\ndifficulty: easy\ntags: [t]\n"
        f"timeout_s: 60\ncheck_timeout_s: {timeout_s}\nentry_point: add\n---\n\n# add\n")
    (tmp_path / "batch.test.py").write_text(tests)
    return load_task(tmp_path / "batch.md")


@pytest.fixture(scope="module")
def pool() -> Any:
    with SandboxPool(sandbox.detect(), LIMITS) as made:
        yield made


def verdicts(task: TaskSpec, code: str, pool: SandboxPool) -> list[tuple[bool, str]]:
    report = run_tests(task, code, pool)
    return [(d.passed, d.message) for d in report.details]


def test_the_calls_of_one_assertion_checks_are_read_from_the_test_file() -> None:
    calls = predicted_calls(TESTS, [f"test_assert_0{i}" for i in range(1, 6)])
    assert [c["name"] for c in calls] == ["add"] * 5
    # a check that is not one call on literals ends the batch: its calls are unknown
    assert len(predicted_calls(TESTS.replace("candidate(-1, 1)", "candidate(*[-1, 1])"),
                               [f"test_assert_0{i}" for i in range(1, 6)])) == 2


def test_a_problem_costs_one_round_trip(tmp_path: Path, pool: SandboxPool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    real = CandidateProcess.send

    def counting(self: CandidateProcess, message: dict[str, Any], deadline: float) -> int:
        sent.append(str(message.get("op")))
        return real(self, message, deadline)

    monkeypatch.setattr(CandidateProcess, "send", counting)
    report = run_tests(task_in(tmp_path), "def add(a, b):\n    return a + b\n", pool)
    assert report.all_passed, report.details
    assert sent == ["import", "batch"]  # written together, before any reply is read


STATEFUL = """
calls = []
def add(a, b):
    calls.append((a, b))
    return a + b if len(calls) % 2 else 0  # right on the 1st, 3rd, 5th call only
"""
# call 3 hangs; call 2 ends its process (the next checks run in a fresh one)
HOSTILE = """
import os, time
def add(a, b):
    if (a, b) == (2, 2):
        os._exit(3)
    if (a, b) == (-1, 1):
        while True:
            time.sleep(1)
    return a + b
"""


@pytest.mark.parametrize("code, expected", [
    (STATEFUL, [True, False, True, False, True]),
    (HOSTILE, [True, False, False, True, True]),
    ("def add(a, b):\n    raise NotImplementedError\n", [False] * 5),
    ("class add:\n    def __init__(self, a, b):\n        pass\n", [False] * 5),
    ("add = 5\n", [False] * 5),
])
def test_verdicts_are_those_of_one_call_at_a_time(tmp_path: Path, pool: SandboxPool,
                                                  code: str, expected: list[bool]) -> None:
    got = verdicts(task_in(tmp_path, timeout_s=1.0), code, pool)
    assert [passed for passed, _ in got] == expected, got
    if code is HOSTILE:
        assert "exited with code 3" in got[1][1] and "timed out" in got[2][1], got
