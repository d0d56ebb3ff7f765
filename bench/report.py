"""`benchrig summary`, `compare` and `report --html` over many result files, as whole processes.

    .venv/bin/python bench/report.py [--files 10000] [--rounds 3]

Writes `--files` varied, schema-valid result files (bench/summary.py's generator: 8 models,
5 agents, every bundled task, up to 3 runs) into a temporary folder, then runs, interleaved
round by round: `summary FOLDER`, `summary FOLDER --format json`, `summary FOLDER --by task`,
`summary FOLDER --format csv --per-attempt`, `compare A B FOLDER` and
`report FOLDER --html OUT`. Prints the median wall and CPU time, their ranges, the peak
resident memory, and the machine's load average while it ran (2 shared cores: wall time
rises with other people's work; CPU time much less). Target (issue 15): each under 5 s for
10,000 files. Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.summary import generate, timed  # noqa: E402

TARGET_S = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchrig-report-") as tmp:
        folder = Path(tmp) / "results"
        folder.mkdir()
        generate(folder, args.files)
        out = Path(tmp) / "report.html"
        cli = [sys.executable, "-m", "benchrig.cli"]
        commands = {
            "summary": [*cli, "summary", str(folder)],
            "summary --format json": [*cli, "summary", str(folder), "--format", "json"],
            "summary --by task": [*cli, "summary", str(folder), "--by", "task"],
            "summary --format csv --per-attempt": [*cli, "summary", str(folder), "--format",
                                                   "csv", "--per-attempt"],
            "compare smollm2@llamacpp phi4-mini@llamacpp": [*cli, "compare", "smollm2@llamacpp",
                                                         "phi4-mini@llamacpp",
                                          str(folder)],
            "report --html": [*cli, "report", str(folder), "--html", str(out)],
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, list[float]] = {name: [] for name in commands}
        loads = [os.getloadavg()[0]]
        for _ in range(args.rounds):
            for name, argv in commands.items():
                wall, cpu, peak, _out = timed(argv)
                walls[name].append(wall)
                cpus[name].append(cpu)
                peaks[name].append(peak)
                loads.append(os.getloadavg()[0])
        size = out.stat().st_size / 2**20
    print(f"{args.files} result files; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"load average {min(loads):.1f}–{max(loads):.1f}; the HTML report {size:.1f} MiB")
    print(f"\n| command ({args.rounds} rounds, interleaved) | wall, median | range | "
          "CPU, median | range | peak RSS |")
    print("|---|---|---|---|---|---|")
    for name in commands:
        w, c = walls[name], cpus[name]
        print(f"| `{name}` | {statistics.median(w):.2f} s | {min(w):.2f}–{max(w):.2f} s | "
              f"{statistics.median(c):.2f} s | {min(c):.2f}–{max(c):.2f} s | "
              f"{max(peaks[name]):.0f} MiB |")
    slowest = max(statistics.median(w) for w in walls.values())
    print(f"\nslowest median wall {slowest:.2f} s; target {TARGET_S:.0f} s each for 10,000 files")


if __name__ == "__main__":
    main()
