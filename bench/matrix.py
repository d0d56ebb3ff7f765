"""Matrix benchmarks: the executor's own cost per attempt, and `benchrig run --jobs 8`
against a paced server that answers in 1 s.

    .venv/bin/python bench/matrix.py [--attempts 2000] [--repeats 3] [--delay 1.0]

Prints a Markdown table of medians; figures are quoted in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.core.settings import Settings  # noqa: E402
from benchrig.execute import AttemptSpec, LocalExecutor, Slot  # noqa: E402
from benchrig.execute.plan import attempt_specs  # noqa: E402
from benchrig.spec import load_tasks, task_paths  # noqa: E402
from tests.helpers.paced import paced  # noqa: E402

TASKS = ("bat-and-ball", "chained-percentages", "discount-tax", "distinct-digit-fives",
         "knights-knaves", "letter-count-berries", "linear-recurrence", "two-trains")


def overhead_ms(attempts: int, jobs: int, lane: bool) -> float:
    """Milliseconds per attempt of LocalExecutor around work that does nothing: scheduling,
    a thread, the hand-back and the call to `done`."""
    task = load_tasks(task_paths(["bat-and-ball"]))[0]
    plan = attempt_specs(((task, "m", run) for run in range(attempts)),
                         "llamacpp" if lane else "openai", "x", None,
                         lambda t, m, r: Settings(), Path("r"), jobs=jobs)
    done: list[int] = []

    def work(spec: AttemptSpec, slot: Slot) -> int:
        return spec.index

    began = time.perf_counter()
    LocalExecutor(jobs).run(plan, work, lambda spec, out: done.append(out))
    assert len(done) == attempts
    return (time.perf_counter() - began) / attempts * 1000


def at(text: str) -> float:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def paced_matrix(url: str, jobs: int, runs: int) -> dict[str, float]:
    """`benchrig run` of len(TASKS) × runs attempts: the command's wall time, and the span
    from the first attempt's start to the last one's end as the results record them."""
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "benchrig.cli", "run", *TASKS, "--model",
                               "paced", "--runs", str(runs), "--driver", "openai",
                               "--provider", url, "--jobs", str(jobs), "--results-dir",
                               folder], cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        assert done.returncode == 1, done.stderr[-2000:]  # paced answers are wrong: a result
        found = [json.loads(p.read_text()) for p in Path(folder).glob("*.json")]
        assert len(found) == len(TASKS) * runs
        span = max(at(r["ended_at"]) for r in found) - min(at(r["started_at"]) for r in found)
    return {"wall": wall, "span": span}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()
    med = statistics.median
    print("| executor overhead per attempt (no-op work) | median ms | range |")
    print("|---|---|---|")
    for jobs, lane in ((1, False), (8, False), (8, True)):
        found = [overhead_ms(args.attempts, jobs, lane) for _ in range(args.repeats)]
        what = f"--jobs {jobs}" + (", one lane (embedded model)" if lane else "")
        print(f"| {what}, {args.attempts} attempts | {med(found):.3f} | "
              f"{min(found):.3f}–{max(found):.3f} |")
    ideal = len(TASKS) * 8 * args.delay / 8
    print(f"\n| `benchrig run`, 64 attempts, paced server answering in {args.delay:g} s "
          "| median s | range | × ideal |")
    print("|---|---|---|---|")
    with paced(delay_s=args.delay) as url:
        runs = [paced_matrix(url, 8, 8) for _ in range(args.repeats)]
    for key, what in (("wall", "whole command (start-up, plan, 64 attempts, table)"),
                      ("span", "first attempt's start to last attempt's end")):
        found = [r[key] for r in runs]
        print(f"| --jobs 8: {what} | {med(found):.2f} | {min(found):.2f}–{max(found):.2f} "
              f"| {med(found) / ideal:.3f} (ideal {ideal:g} s) |")


if __name__ == "__main__":
    main()
