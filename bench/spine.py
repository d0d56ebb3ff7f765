"""Spine benchmarks: replay overhead per attempt, decode-rate fidelity, start-up to dispatch.

    .venv/bin/python bench/spine.py [--attempts 50] [--generations 5] [--startups 5]

Prints a Markdown table of medians; figures are quoted in docs/benchmarks.md.
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

from benchrig.core.settings import Settings  # noqa: E402
from benchrig.drivers import get_driver  # noqa: E402
from benchrig.drivers.base import DriverRequest  # noqa: E402
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for  # noqa: E402
from benchrig.prompt import render  # noqa: E402
from benchrig.spec import load_task  # noqa: E402


def replay_overhead(attempts: int) -> list[float]:
    """Whole attempts with the replay driver: load task, extract, sandbox, validate, write."""
    solution = (ROOT / "tests" / "fixtures" / "solutions" / "lru-cache.py").read_text()
    driver = get_driver("replay")
    timings = []
    with tempfile.TemporaryDirectory() as folder:
        answer = Path(folder) / "answer.md"
        answer.write_text(f"Here you go:\n```python\n{solution}```\nDone.\n")
        for _ in range(attempts + 1):
            began = time.perf_counter()
            task = load_task(ROOT / "tasks" / "lru-cache.md")
            attempt = run_attempt(task, "oracle", driver, str(answer),
                                  settings_for(task, Overrides()), Path(folder) / "results")
            timings.append(time.perf_counter() - began)
            assert attempt.result["result"] == "pass"
    return timings[1:]  # the first one compiles and caches the schema validator


def decode_fidelity(generations: int) -> list[tuple[float, float]]:
    """(BenchRig tokens/s, llama.cpp's own tokens/s) for the same generations."""
    driver = get_driver("llamacpp")
    task = load_task(ROOT / "tasks" / "lru-cache.md")
    pairs = []
    for seed in range(generations):
        settings = Settings(temperature=0.7, max_tokens=256, seed=seed, timeout_s=300)
        out = driver.run(DriverRequest(task.view(), render(task), "smollm2", None, settings))
        m = out.metrics
        assert m.tokens_per_s is not None
        pairs.append((m.tokens_per_s, m.engine["predicted_per_second"]))
    return pairs


def startup(runs: int) -> list[tuple[float, float]]:
    """(spawn → 'generating' on stderr, model load) for `scripts/run.sh … llamacpp`."""
    found = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "BENCHRIG_RESULTS_DIR": folder}
            began = time.perf_counter()
            proc = subprocess.Popen([str(ROOT / "scripts" / "run.sh"), "valid-brackets",
                                     "smollm2", "llamacpp"], stderr=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, env=env, text=True)
            assert proc.stderr is not None
            dispatched = None
            for line in proc.stderr:
                if dispatched is None and line.rstrip().endswith(": generating"):
                    dispatched = time.perf_counter() - began
            proc.wait()
            result = json.loads(next(Path(folder).glob("*-valid-brackets-*.json")).read_text())
            assert dispatched is not None
            found.append((dispatched, result["metrics"]["load_time_s"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=50)
    parser.add_argument("--generations", type=int, default=5)
    parser.add_argument("--startups", type=int, default=5)
    args = parser.parse_args()
    med = statistics.median
    replay = replay_overhead(args.attempts)
    print("| measure | median | range | n |\n|---|---|---|---|")
    print(f"| replay attempt overhead | {med(replay) * 1000:.1f} ms | "
          f"{min(replay) * 1000:.1f}–{max(replay) * 1000:.1f} ms | {len(replay)} |")
    fidelity = decode_fidelity(args.generations)
    ratios = [ours / engine for ours, engine in fidelity]
    print(f"| decode tokens/s, BenchRig ÷ llama.cpp counters | {med(ratios):.3f} | "
          f"{min(ratios):.3f}–{max(ratios):.3f} | {len(ratios)} |")
    print(f"| decode tokens/s, BenchRig / llama.cpp | {med(o for o, _ in fidelity):.1f} / "
          f"{med(e for _, e in fidelity):.1f} | | {len(fidelity)} |")
    starts = startup(args.startups)
    fixed = [total - load for total, load in starts]
    print(f"| run.sh spawn → first token request | {med(t for t, _ in starts) * 1000:.0f} ms | "
          f"{min(t for t, _ in starts) * 1000:.0f}–{max(t for t, _ in starts) * 1000:.0f} ms "
          f"| {len(starts)} |")
    print(f"| … of which model load (llama_cpp import + GGUF) | "
          f"{med(load for _, load in starts) * 1000:.0f} ms | | {len(starts)} |")
    print(f"| … start-up beyond model load | {med(fixed) * 1000:.0f} ms | "
          f"{min(fixed) * 1000:.0f}–{max(fixed) * 1000:.0f} ms | {len(fixed)} |")


if __name__ == "__main__":
    main()
