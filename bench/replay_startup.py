"""Start-up as whole processes: one replay attempt through `scripts/run.sh`, `benchrig summary`
of a small results folder and `benchrig --help`, optionally against a revision.

    .venv/bin/python bench/replay_startup.py [--runs 20] [--before REV] [--only replay,summary,help]

`replay` runs `scripts/run.sh lru-cache oracle replay ANSWER` (the fixture solution, fenced)
— what a user types to check one saved answer: interpreter start-up, imports, parsing, task
loading, confinement detection, the sandbox, the result written, the table, the exit.
`summary` runs `python -m benchrig.cli summary FOLDER` over the 5 results of 5 such replays;
`help` runs `python -m benchrig.cli --help`. Each command runs `--runs` times. With
`--before REV` the tree at git revision REV (exported to a temporary folder, sharing this
.venv) runs too, alternated run by run, so both see the same noise, and the ratio is taken
pair by pair. Wall time is the parent's clock from spawn to reaping; CPU (user + sys) and
peak RSS come from the process's own rusage (its reaped children included: the sandbox).
Bytecode is written and used (PYTHONDONTWRITEBYTECODE is dropped), as after an install; one
warm-up run each writes it. Results go to temporary folders. Targets: the replay under
0.35 s of wall (issue 23); figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "tests" / "fixtures" / "solutions" / "lru-cache.py"
COMMANDS = ("replay", "summary", "help")
DROPPED = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")


def export(revision: str, folder: Path) -> Path:
    """The tree at `revision`, written into `folder`, with this checkout's .venv."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (folder / ".venv").symlink_to(ROOT / ".venv")
    return folder


def argv(what: str, tree: Path, answer: Path, folder: Path) -> list[str]:
    """The command line of `what` from `tree`."""
    if what == "replay":
        return [str(tree / "scripts" / "run.sh"), "lru-cache", "oracle", "replay", str(answer)]
    cli = [str(ROOT / ".venv" / "bin" / "python"), "-m", "benchrig.cli"]
    return [*cli, "summary", str(folder)] if what == "summary" else [*cli, "--help"]


def timed(command: list[str], tree: Path, results: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of `command` run from `tree`."""
    env = {key: value for key, value in os.environ.items() if key not in DROPPED}
    began = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**env, "BENCHRIG_RESULTS_DIR": str(results)}, cwd=tree)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tree}: {command[-2:]} failed: {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def spread(values: list[float], unit: str = " s", digits: int = 3) -> str:
    return (f"{statistics.median(values):.{digits}f}{unit} "
            f"({min(values):.{digits}f}–{max(values):.{digits}f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--before", metavar="REV", help="also the tree at this git revision")
    parser.add_argument("--only", default=",".join(COMMANDS),
                        help=f"the commands to time, of {', '.join(COMMANDS)}")
    args = parser.parse_args()
    chosen = [what for what in args.only.split(",") if what]
    if not chosen or set(chosen) - set(COMMANDS):
        parser.error(f"--only: choose from {', '.join(COMMANDS)}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        answer = folder / "answer.md"
        answer.write_text(f"```python\n{SOLUTION.read_text()}```\n", encoding="utf-8")
        trees = {"now": ROOT}
        if args.before:
            (folder / "before").mkdir()
            trees["before"] = export(args.before, folder / "before")
        small = folder / "small"  # the summary's folder: 5 replay results
        for _ in range(5):
            timed(argv("replay", ROOT, answer, small), ROOT, small)
        for what in chosen:
            figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
            commands = {name: argv(what, tree, answer, small) for name, tree in trees.items()}
            for name, tree in trees.items():  # one warm-up each: bytecode caches, page cache
                timed(commands[name], tree, folder / f"results-{name}")
            for index in range(args.runs):
                order = list(trees) if index % 2 == 0 else list(reversed(trees))
                for name in order:
                    figures[name].append(timed(commands[name], trees[name],
                                               folder / f"results-{name}"))
            report(what, figures, args.runs, args.before)


def report(what: str, figures: dict[str, list[tuple[float, float, float]]], runs: int,
           before: str | None) -> None:
    print(f"\n`{what}`, {runs} runs each (load average {os.getloadavg()[0]:.1f} at the end):")
    print("| tree | wall, median (range) | CPU, median (range) | peak RSS |")
    print("|---|---|---|---|")
    for name, rows in figures.items():
        walls, cpus, rss = zip(*rows, strict=True)
        label = name if name == "now" else f"before ({before})"
        print(f"| {label} | {spread(list(walls))} | {spread(list(cpus))} | "
              f"{statistics.median(rss):.1f} MiB |")
    if before:
        pairs = list(zip(figures["now"], figures["before"], strict=True))
        print(f"now ÷ before, pair by pair: wall {spread([a[0] / b[0] for a, b in pairs], '×', 2)},"
              f" CPU {spread([a[1] / b[1] for a, b in pairs], '×', 2)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
