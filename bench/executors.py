"""The Ray executor against the local one: 64 attempts, 8 in flight, each answered by a paced
loopback server 1 s after its request, recorded as `benchrig run` records them.

    .venv/bin/python bench/executors.py [--attempts 64] [--jobs 8] [--delay 1.0] [--rounds 3]

Needs Ray (pip install '.[ray]'). Ray's start-up (a local `ray.init()`, then its first
`jobs` worker processes) is measured apart from the matrix, which runs on warm workers;
one cold run (start-up and matrix together) is measured too. Prints a Markdown table of
medians; figures are quoted in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.http_drivers import Paced  # noqa: E402
from benchrig.drivers import get_driver  # noqa: E402
from benchrig.execute import AttemptSpec, LocalExecutor, Slot  # noqa: E402
from benchrig.execute.plan import attempt_specs  # noqa: E402
from benchrig.execute.raycluster import RayExecutor  # noqa: E402
from benchrig.orchestrate import remote  # noqa: E402
from benchrig.orchestrate.runner import Overrides, Produced, perform, record, settings_for  # noqa: E402
from benchrig.sandbox import SandboxPool  # noqa: E402
from benchrig.spec import load_task  # noqa: E402

TASK = load_task(ROOT / "tasks" / "bat-and-ball.md")
med = statistics.median


def plan(attempts: int, url: str, jobs: int, out: Path) -> list[AttemptSpec]:
    keys = [(TASK, "paced", run) for run in range(attempts)]
    return attempt_specs(keys, "openai", "openai", url,
                         lambda task, model, run: settings_for(task, Overrides(), model,
                                                               run_index=run),
                         out, jobs=jobs)


def recorder(out: Path, seen: list[dict[str, Any]]
             ) -> Callable[[AttemptSpec, tuple[int, Produced]], None]:
    def done(spec: AttemptSpec, outcome: tuple[int, Produced]) -> None:
        in_flight, produced = outcome
        notes = {"settings": {"jobs": spec.jobs, "in_flight": in_flight}}
        seen.append(record(produced, out, spec.run_index, notes).result)
    return done


def local_run(attempts: int, url: str, jobs: int) -> float:
    with tempfile.TemporaryDirectory() as folder, SandboxPool() as sandboxes:
        out, seen = Path(folder), list[dict[str, Any]]()
        driver = get_driver("openai")

        def work(spec: AttemptSpec, slot: Slot) -> tuple[int, Produced]:
            return slot.in_flight, perform(spec, slot, driver, sandboxes)

        began = time.perf_counter()
        LocalExecutor(jobs).run(plan(attempts, url, jobs, out), work, recorder(out, seen))
        wall = time.perf_counter() - began
    assert len(seen) == attempts and all(r["result"] == "fail" for r in seen), seen[:1]
    return wall


def ray_runs(attempts: int, url: str, jobs: int) -> dict[str, float]:
    """Start-up (ray.init, then the first `jobs` workers), then the matrix on warm workers."""
    with tempfile.TemporaryDirectory() as folder:
        out, seen = Path(folder), list[dict[str, Any]]()
        began = time.perf_counter()
        with RayExecutor(jobs, lost=remote.lost) as executor:
            executor.connect(plan(attempts, url, jobs, out))
            connected = time.perf_counter()
            executor.run(plan(jobs, url, jobs, out), remote.attempt, recorder(out, []))
            warm = time.perf_counter()
            executor.run(plan(attempts, url, jobs, out), remote.attempt, recorder(out, seen))
            ended = time.perf_counter()
        stopped = time.perf_counter()
    assert len(seen) == attempts and all(r["result"] == "fail" for r in seen), seen[:1]
    return {"init": connected - began, "workers": warm - connected, "matrix": ended - warm,
            "shutdown": stopped - ended}


def ray_cold(attempts: int, url: str, jobs: int) -> float:
    """One run as `benchrig run --executor ray` does it: Ray started and stopped inside."""
    with tempfile.TemporaryDirectory() as folder:
        out, seen = Path(folder), list[dict[str, Any]]()
        began = time.perf_counter()
        RayExecutor(jobs, lost=remote.lost).run(plan(attempts, url, jobs, out),
                                                remote.attempt, recorder(out, seen))
        wall = time.perf_counter() - began
    assert len(seen) == attempts
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=64)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server = Paced({"delay_s": args.delay, "rate": 100_000, "tokens": 8, "thinking": 0,
                    "per_event": 4, "per_write": 64, "num_ctx": 4096})
    url = f"{server.url}/v1"
    try:
        local, ray, cold = [], [], []
        for _ in range(args.rounds):  # alternated, so a busy spell of the machine hits both
            local.append(local_run(args.attempts, url, args.jobs))
            ray.append(ray_runs(args.attempts, url, args.jobs))
        cold.append(ray_cold(args.attempts, url, args.jobs))
    finally:
        server.close()
    ideal = args.attempts / args.jobs * args.delay
    matrix = med(r["matrix"] for r in ray)
    print(f"{args.attempts} attempts, {args.jobs} in flight, answers {args.delay:g} s after "
          f"the request (ideal {ideal:.1f} s); medians of {args.rounds} rounds\n")
    print("| figure | seconds |\n|---|---:|")
    print(f"| local executor: the matrix | {med(local):.2f} (range {min(local):.2f}–"
          f"{max(local):.2f}) |")
    print(f"| Ray executor: the matrix, warm workers | {matrix:.2f} (range "
          f"{min(r['matrix'] for r in ray):.2f}–{max(r['matrix'] for r in ray):.2f}) |")
    print(f"| Ray / local | {matrix / med(local):.2f}× |")
    print(f"| Ray start-up: `ray.init()` (local) | {med(r['init'] for r in ray):.2f} |")
    print(f"| Ray start-up: the first {args.jobs} workers (and their {args.jobs} attempts) | "
          f"{med(r['workers'] for r in ray):.2f} |")
    print(f"| Ray shut-down | {med(r['shutdown'] for r in ray):.2f} |")
    print(f"| Ray executor, cold: start-up, matrix, shut-down (one run) | {cold[0]:.2f} |")


if __name__ == "__main__":
    main()
