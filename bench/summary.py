"""`benchrig summary` over many result files, beside a bare read-and-count of the same files.

    .venv/bin/python bench/summary.py [--files 10000] [--rounds 5] [--format table]
        [--command summary|compare|report-html] [--folder DIR] [--before REV]
        [--repeat-folder N]

Writes `--files` schema-valid result files, varied as real ones are (8 models, 3 agents,
every bundled task and suite, up to 3 runs, passes, failures, errors and retries, check
details, excerpts up to 400 characters, agent settings, evidence), into a temporary folder.
Then, back to back and interleaved round by round, it runs as whole processes:

- `benchrig summary FOLDER` (what a user runs: interpreter start-up, imports, reading,
  validating every file against schema/result.schema.json, the report) — or, with
  `--command`, `benchrig compare smollm2 llama3.2:3b FOLDER` or `benchrig report FOLDER
  --html FILE` — and
- a bare read-and-count: the same interpreter reading and `json.loads`-ing every file and
  counting them — the floor any summary of these files pays.

Prints medians, ranges and the peak resident memory of each (the child's own rusage).
`--folder DIR` keeps the generated files there and reuses them when it already holds
`--files` of them (100,000 take minutes to write). `--before REV` runs the tree at git
revision REV too (exported beside, sharing this .venv), in the same rounds: each tree's
ratio to the bare read is taken over the same noise. `--repeat-folder N` gives the folder N
times to every command (the bare read too): the same files read N times, so a million
results need only 100,000 files on the disk. The load average is printed.
The target (issue 27) is 100,000 results at ≤ 1.5× the bare read and ≤ 300 MiB; figures
go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
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

from benchrig.resultio.files import result_path, result_text, validate  # noqa: E402

TARGET_RATIO = 1.5
TARGET_MIB = 300
MODELS = ["smollm2", "qwen2.5-coder:7b", "llama3.2:3b", "gpt-4o-mini", "claude-sonnet-4",
          "deepseek-r1:8b", "phi4-mini", "/models/Mistral-7B-Instruct-v0.3.Q4_K_M.gguf"]
AGENTS = ["llamacpp", "openai", "ollama", "pi", "claude-code"]
BARE = ("import json, pathlib, sys\n"
        "count = 0\n"
        "for folder in sys.argv[1:]:\n"
        "    for path in sorted(pathlib.Path(folder).glob('*.json')):\n"
        "        json.loads(path.read_text(encoding='utf-8'))\n"
        "        count += 1\n"
        "print(count)\n")


def _summary(folder: Path, _tmp: Path, format_: str) -> list[str]:
    return ["summary", str(folder), "--format", format_]


def _compare(folder: Path, _tmp: Path, _format: str) -> list[str]:
    """The two most common model@agent sides of the folder (a model alone pools agents)."""
    sides: dict[str, int] = {}
    for path in sorted(folder.glob("*.json"))[:3000]:
        r = json.loads(path.read_text(encoding="utf-8"))
        side = f"{r['model']}@{r['agent']}"
        sides[side] = sides.get(side, 0) + 1
    a, b = sorted(sides, key=lambda s: -sides[s])[:2]
    return ["compare", a, b, str(folder)]


def _report_html(folder: Path, tmp: Path, _format: str) -> list[str]:
    return ["report", str(folder), "--html", str(tmp / "report.html")]


COMMANDS: dict[str, Callable[[Path, Path, str], list[str]]] = {
    "summary": _summary, "compare": _compare, "report-html": _report_html}


def tasks() -> list[tuple[str, str, int]]:
    """(task id, suite, number of checks) of every bundled task."""
    found = []
    for path in sorted((ROOT / "tasks").glob("*.md")):
        head = path.read_text(encoding="utf-8").split("---")[1]
        suite = next(line.split(":", 1)[1].strip() for line in head.splitlines()
                     if line.startswith("suite:"))
        checks = {"coding": 5, "polish": 5, "speed": 0}.get(suite, 1)
        found.append((path.stem, suite, checks))
    return found


def one_result(template: dict[str, Any], rng: random.Random, n: int, model: str, agent: str,
               task: tuple[str, str, int], run: int) -> dict[str, Any]:
    task_id, suite, total = task
    r = copy.deepcopy(template)
    outcome = rng.choices(["pass", "fail", "error", "no-test"], [5, 4, 1, 0])[0]
    if suite == "speed":
        outcome = "no-test" if rng.random() > 0.05 else "error"
    passed = total if outcome == "pass" else (0 if outcome == "error" else
                                              rng.randrange(total) if total else 0)
    started = 1_700_000_000 + n * 7 + run * 100_000
    wall = rng.uniform(0.5, 90.0)
    ttft = None if outcome == "error" else rng.uniform(5.0, 4000.0)
    tokens = None if outcome == "error" else rng.randrange(1, 4096)
    r.update(
        task=task_id, model=model, agent=agent, driver=agent, suite=suite,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started)) + f".{n % 10**6:06d}Z",
        ended_at=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started + int(wall))) + "Z",
        run_id=f"{rng.getrandbits(48):012x}", result=outcome, pass_at_1=outcome == "pass",
        notes="" if outcome == "pass" else rng.choice(
            ["Response truncated at num_predict=1024 before the code was complete",
             "expected 42, got 41", "1 of 5 checks failed: AssertionError"]),
        provider=None if agent == "llamacpp" else rng.choice(["local", "http://127.0.0.1:8080"]),
        truncated=rng.random() < 0.1, finish_reason=rng.choice(["stop", "length", None]),
        answer_excerpt=("def solve(x):\n    return x * 2\n" * 20)[:rng.randrange(0, 401)],
        error={"kind": rng.choice(["infra", "harness", "timeout", "model"]),
               "message": "connection refused"} if outcome == "error" else None,
        isolation=rng.choice(["full", "degraded"]) if suite == "coding" else None,
        code_source="message" if suite == "coding" else None,
        evidence={"stdout": "ok\n" * rng.randrange(0, 40)} if suite == "coding" else {},
        run_index=run,
    )
    if rng.random() < 0.3:
        r["truncated_thinking"] = False
    r["settings"] = {**r["settings"], "temperature": rng.choice([0, 0.7]), "seed": run}
    if agent in ("pi", "claude-code"):
        r["settings"]["agent_env"] = ["HOME", "PATH", "LANG", "ANTHROPIC_API_KEY"]
    r["checks"] = {"passed": passed, "total": total, "details": [
        {"name": f"test_case_{i}", "passed": i < passed,
         "message": "" if i < passed else "AssertionError: expected [1, 2], got [2, 1]",
         "duration_s": rng.uniform(0, 0.01)} for i in range(total)]}
    r["metrics"].update(wall_s=wall, ttft_ms=ttft, answer_ttft_ms=ttft, output_tokens=tokens,
                        tokens_per_s=None if tokens is None else rng.uniform(5, 200),
                        cost_usd=None if agent == "llamacpp" else rng.uniform(0, 0.05),
                        thinking_tokens=0, thinking_tokens_source="counted",
                        check_s=rng.uniform(0.01, 0.2))
    return r


def generate(folder: Path, count: int, seed: int = 12) -> None:
    """`count` varied, schema-valid result files (each validated as BenchRig writes them)."""
    template = json.loads((ROOT / "results" / "EXAMPLE.json").read_text(encoding="utf-8"))
    rng = random.Random(seed)
    every = tasks()
    n = 0
    while n < count:
        model, agent = rng.choice(MODELS), rng.choice(AGENTS)
        for run in range(rng.choice([1, 1, 3])):
            for task in every:
                if n == count:
                    return
                r = one_result(template, rng, n, model, agent, task, run)
                validate(r)
                result_path(folder, r).write_text(result_text(r), encoding="utf-8")
                n += 1


def export(revision: str, folder: Path) -> Path:
    """The tree at `revision`, written into `folder`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def timed(argv: list[str], tree: Path = ROOT) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS MiB, stdout) of one whole process run from
    `tree`, from its own rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=tree,
                                env={**os.environ, "PYTHONPATH": str(tree)})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{argv} failed ({proc.returncode}): {err.read().decode()[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--format", default="table", choices=["table", "markdown", "csv"])
    parser.add_argument("--command", default="summary", choices=list(COMMANDS))
    parser.add_argument("--folder", type=Path, default=None,
                        help="Keep the generated files here; reuse them if it holds --files.")
    parser.add_argument("--before", metavar="REV", help="also the tree at this git revision")
    parser.add_argument("--repeat-folder", type=int, default=1, metavar="N",
                        help="Give the folder N times on each command line: the same files "
                             "read N times, N × --files results (1,000,000 from 100,000).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchrig-summary-") as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        if sum(1 for _ in folder.glob("*.json")) != args.files:
            for old in folder.glob("*.json"):
                old.unlink()
            generate(folder, args.files)
        size = sum(p.stat().st_size for p in folder.glob("*.json"))
        print(f"{args.files} result files, {size / 2**20:.1f} MiB, ready in "
              f"{time.perf_counter() - began:.1f} s")
        mine = f"benchrig {args.command}"
        argv = COMMANDS[args.command](folder, Path(tmp), args.format)
        folders = [str(folder)] * args.repeat_folder  # the same files, read N times
        at = argv.index(str(folder))
        argv[at:at + 1] = folders
        commands = {
            mine: [sys.executable, "-m", "benchrig.cli", *argv],
            "bare read-and-count": [sys.executable, "-c", BARE, *folders],
        }
        trees = {name: ROOT for name in commands}
        if args.before:
            before = f"{mine} at {args.before}"
            (Path(tmp) / "before").mkdir()
            trees[before] = export(args.before, Path(tmp) / "before")
            commands[before] = [sys.executable, "-m", "benchrig.cli",
                                *[a.replace("report.html", "before.html") for a in argv]]
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, line in commands.items():
                wall, cpu, peak, _out = timed(line, trees[name])
                walls[name].append(wall)
                cpus[name].append(cpu)
                peaks[name].append(peak)
    print(f"\n| command ({args.rounds} rounds, interleaved) | wall, median | range | "
          "CPU, median | peak RSS |")
    print("|---|---|---|---|---|")
    for name in commands:
        w = walls[name]
        print(f"| {name} | {statistics.median(w):.3f} s | {min(w):.3f}–{max(w):.3f} s | "
              f"{statistics.median(cpus[name]):.3f} s | {max(peaks[name]):.0f} MiB |")
    bare = statistics.median(walls["bare read-and-count"])
    bare_cpu = statistics.median(cpus["bare read-and-count"])
    for name in commands:
        if name.startswith(mine):
            print(f"\n{name} ÷ bare: {statistics.median(walls[name]) / bare:.2f}× of wall, "
                  f"{statistics.median(cpus[name]) / bare_cpu:.2f}× "
                  f"of CPU at {args.files * args.repeat_folder} results "
                  f"({args.files} files × {args.repeat_folder}), peak {max(peaks[name]):.0f} MiB")
    print(f"targets (issue 27): ≤ {TARGET_RATIO}× and ≤ {TARGET_MIB} MiB at 100,000; "
          f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
