"""The judge's own guards, each tried as the attack: a star-import that replaces the test's
builtins, a test body kept running by the candidate's value, CPU hidden in a joined thread,
a sandbox restart at the attempt's end."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from benchrig.checks.coding import CheckReport, run_tests, star_bindable
from benchrig.core.task import TaskSpec
from benchrig.sandbox import SandboxPool, confinement
from benchrig.sandbox.process import CandidateProcess
from benchrig.spec import load_task


def custom_task(tmp_path: Path, tests: str, timeout_s: float = 5.0,
                entry: str = "add") -> TaskSpec:
    (tmp_path / "custom.md").write_text(
        "---\nid: custom\nsuite: coding\nlanguage: python\ndifficulty: easy\ntags: [t]\n"
        f"timeout_s: 60\ncheck_timeout_s: {timeout_s}\nentry_point: {entry}\n---\n\n# x\n")
    (tmp_path / "custom.test.py").write_text(tests)
    return load_task(tmp_path / "custom.md")


def bounded(job: Callable[[], CheckReport], seconds: float = 120.0) -> CheckReport:
    """Run `job()` in a thread; fail (not hang) if it never returns."""
    done: list[CheckReport] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(job())
        except BaseException as exc:  # raised here, in the test's thread
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if failed:
        raise failed[0]
    assert done, f"the judge was still running after {seconds:.0f} s"
    return done[0]


# ------------------------------------------------------------------ star-import (item 2)
BUILTIN_TESTS = '''from solution import *


def close(a, b):
    return abs(a - b) < 0.01


def test_area():
    assert close(area(2), 12.566)


def test_float():
    assert isinstance(area(1), float)


def test_float_value():
    assert float(area(1)) > 3.14


def test_sorted():
    assert sorted([area(2), area(1)]) == [area(1), area(2)]
'''
SHADOWING = '''__all__ = ["area", "abs", "isinstance", "float", "close", "sorted"]


def area(r):
    return r


def abs(x):
    return 0


def isinstance(value, kind):
    return True


def float(x):
    return 100.0


def close(a, b):
    return True


def sorted(items):
    return items[::-1]
'''
RIGHT_AREA = "import math\n\ndef area(r):\n    return math.pi * r * r\n"


def test_a_star_import_cannot_replace_the_tests_builtins_or_its_own_names(
        tmp_path: Path) -> None:
    """A wrong answer whose __all__ exports `abs`, `isinstance`, `float`, `sorted` and the
    test's own helper `close` passed every check; it binds only names the test uses and
    does not define, never a builtin."""
    task = custom_task(tmp_path, BUILTIN_TESTS, entry="area")
    wrong = run_tests(task, SHADOWING)
    assert [d.passed for d in wrong.details] == [False, False, False, True], wrong.details
    right = run_tests(task, RIGHT_AREA)
    assert right.all_passed, right.details
    assert star_bindable(BUILTIN_TESTS) == {"area"}


# ------------------------------------------------------------------ the watchdog (item 5)
LOOPING_TESTS = '''from solution import add


def test_loops_on_the_answer():
    total = 0
    for _ in range(add(1, 2)):
        total += 1
    assert total == 3


def test_swallows_the_overrun():
    try:
        for _ in range(add(1, 2)):
            pass
    except BaseException:
        pass


def test_fine():
    assert add(2, 2) == 4
'''


def test_a_test_body_kept_running_by_the_candidates_value_fails_at_the_deadline(
        tmp_path: Path) -> None:
    task = custom_task(tmp_path, LOOPING_TESTS, timeout_s=1.0)
    code = "def add(a, b):\n    return 10**15 if (a, b) == (1, 2) else a + b\n"
    report = bounded(lambda: run_tests(task, code))
    assert [d.passed for d in report.details] == [False, False, True], report.details
    assert all("timed out" in d.message for d in report.details[:2])
    right = run_tests(task, "def add(a, b):\n    return a + b\n")
    assert right.all_passed, right.details


# ------------------------------------------------------------------ CPU time (item 6)
THREADED_BURN = '''import threading, time


def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


worker = threading.Thread(target=burn, args=(0.2,))
worker.start()
worker.join()


def add(a, b):
    inner = threading.Thread(target=burn, args=(0.2,))
    inner.start()
    inner.join()
    return a + b
'''


@pytest.mark.parametrize("level", ["full", "degraded"])
def test_cpu_burned_in_a_joined_thread_is_counted(tmp_path: Path, level: str) -> None:
    """Only live threads were summed: 0.8 s of work in joined threads read as ~0.03 s (here
    0.4 s: the bound is CPU time, which load does not stretch)."""
    task = custom_task(tmp_path, "from solution import add\n\ndef test_add():\n"
                       "    assert add(1, 2) == 3\n", timeout_s=20.0)
    conf = confinement.detect()
    if level == "degraded":
        conf = conf.without_namespaces()
    elif conf.level != "full":
        pytest.skip("no full isolation here")
    with SandboxPool(conf) as pool:
        report = run_tests(task, THREADED_BURN, pool)
    assert report.all_passed, report.details
    assert report.sandbox["cpu_s"] >= 0.375  # the 0.4 s the kernel counted, nearly all of it


# ------------------------------------------------------------------ deadlines (item 7)
class SlowRestart(SandboxPool):
    """Sandboxes whose start-up after the first lasts past `up_after` (a loaded machine)."""

    taken = 0
    up_after = 0.0  # a time.monotonic()

    def take(self, module_file: str) -> CandidateProcess:
        self.taken += 1
        while self.taken > 1 and time.monotonic() <= self.up_after:  # not a fixed 4 s
            time.sleep(0.05)
        return super().take(module_file)


def test_a_sandbox_restart_cannot_push_a_check_past_the_attempts_end(tmp_path: Path) -> None:
    """A restart's start-up is given back to the check, never beyond the attempt's deadline:
    the second check's sandbox is up only after the attempt's end, so it gets no time."""
    task = custom_task(tmp_path, "from solution import add\n\ndef test_crash():\n"
                       "    add(0, 0)\n\ndef test_add():\n    assert add(1, 2) == 3\n",
                       timeout_s=30.0)
    code = "import os\ndef add(a, b):\n    if a == 0:\n        os._exit(1)\n    return a + b\n"
    with SlowRestart(prestart=False) as pool:
        ends_at = time.monotonic() + 3.0
        pool.up_after = ends_at + 0.2
        report = run_tests(task, code, pool, ends_at=ends_at)
    assert [d.passed for d in report.details] == [False, False], report.details
    assert "timed out" in report.details[1].message


@pytest.fixture
def slow_python() -> Iterator[str]:
    """An interpreter that takes 60 s to start (a machine under heavy load)."""
    folder = Path(tempfile.mkdtemp(prefix="benchrig-slow-python-", dir="/tmp"))
    folder.chmod(0o755)  # the sandbox's own uid must reach it
    script = folder / "python3"
    script.write_text(f"#!/bin/sh\nsleep 60\nexec {confinement.detect().interpreter} \"$@\"\n")
    script.chmod(0o755)
    try:
        yield str(script)
    finally:
        shutil.rmtree(folder)


def test_a_sandbox_start_up_is_not_waited_for_past_the_attempts_end(
        tmp_path: Path, slow_python: str) -> None:
    """The hello was awaited for 30 s whatever the attempt had left, and then called the
    sandbox broken (error/harness): now the wait ends with the attempt, as its timeout."""
    task = custom_task(tmp_path, "from solution import add\n\ndef test_add():\n"
                       "    assert add(1, 2) == 3\n", timeout_s=30.0)
    conf = replace(confinement.detect().without_namespaces("a slow interpreter"),
                   interpreter=slow_python)
    with SandboxPool(conf, prestart=False) as pool:
        report = bounded(lambda: run_tests(task, "def add(a, b):\n    return a + b\n", pool,
                                           ends_at=time.monotonic() + 1.0))
    assert [d.passed for d in report.details] == [False]
    assert "timed out" in report.details[0].message, report.details
    assert report.sandbox["cleanup"] == "verified"
