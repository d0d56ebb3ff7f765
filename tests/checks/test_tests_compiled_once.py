"""A task's hidden tests are compiled once per run, not once per answer (`benchrig verify`
replays two answers a problem, `--runs N` N); every answer still runs them in a namespace of
its own, so nothing one answer's run leaves reaches the next (issue 27)."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchrig import sandbox
from benchrig.checks.coding import run_tests
from benchrig.sandbox import Limits, SandboxPool
from tests.checks.test_prefetch import task_in

LIMITS = Limits(cpu_s=10, address_space_mb=512, processes=24, scratch_mb=4)
GOOD = "def add(a, b):\n    return a + b\n"
# The test file keeps state at module level; a second answer must see it as written.
REMEMBERING = '''from solution import add

SEEN = []


def test_first_run_of_this_file() -> None:
    assert not SEEN, "state left by an earlier answer's run"
    SEEN.append(add(1, 2))
    assert SEEN == [3]
'''
# An answer that passes only if it can reach the trusted test module's state: it cannot.
REACHING = """
import sys
def add(a, b):
    for module in list(sys.modules.values()):
        seen = getattr(module, "SEEN", None)
        if isinstance(seen, list):
            seen.append("planted")
    return a + b
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(sandbox.detect(), LIMITS) as made:
        yield made


def test_the_tests_are_compiled_once_for_every_answer_of_a_run(
        tmp_path: Path, pool: SandboxPool, monkeypatch: pytest.MonkeyPatch) -> None:
    task = task_in(tmp_path)
    compiled: list[str] = []
    real = builtins.compile

    def counting(source: Any, filename: Any, *args: Any, **kwargs: Any) -> Any:
        if str(filename) == str(task.test_path):
            compiled.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    for _ in range(3):
        assert run_tests(task, GOOD, pool).all_passed
    assert compiled == [str(task.test_path)]


def test_each_answer_runs_the_tests_from_the_file_as_written(tmp_path: Path,
                                                             pool: SandboxPool) -> None:
    task = task_in(tmp_path, REMEMBERING)
    for code in (GOOD, REACHING, GOOD):
        report = run_tests(task, code, pool)
        assert report.all_passed, report.details
