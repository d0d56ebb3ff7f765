"""Agent overhead: what BenchRig adds around an agent CLI (workspace, spawn, per-line parsing,
file read-back, check, result), measured with the fixture Claude Code CLI of the tests.

    .venv/bin/python bench/agents.py [--attempts 20] [--lines 5000]

Each BenchRig attempt is paired with a bare `subprocess.run` of the same fixture with the same
arguments (the agent's own runtime, start-up included); the overhead is the difference,
median over the pairs. The bare run is repeated under bubblewrap as BenchRig confines an
agent (where it can), to show what the confinement costs. Prints a Markdown table; figures
are quoted in docs/benchmarks.md.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.drivers import get_driver  # noqa: E402
from benchrig.drivers.claude import ClaudeParser  # noqa: E402
from benchrig.drivers.confine import confine  # noqa: E402
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for  # noqa: E402
from benchrig.spec import load_task  # noqa: E402
from tests.helpers.staging import stage_files  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "agents" / "claude"
SUCCESS = ROOT / "tests" / "fixtures" / "agents" / "streams" / "claude-success.jsonl"


def long_stream(path: Path, deltas: int) -> Path:
    """claude-success with `deltas` more text deltas streamed before the final answer."""
    lines = SUCCESS.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"Done: solution.py' in line)
    delta = json.dumps({"type": "stream_event", "event": {
        "type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "word "}}})
    path.write_text("\n".join([*lines[:at], *[delta] * deltas, *lines[at:]]) + "\n")
    return path


def pairs(scenario: Path, attempts: int, folder: Path) -> list[dict[str, float]]:
    """(BenchRig attempt, bare run of the same command) timings, interleaved."""
    log = folder / "log.jsonl"
    os.environ.update({"BENCHRIG_CLAUDE_BIN": str(FIXTURE), "FAKE_AGENT_LOG": str(log),
                       # as text: a confined fixture does not see the host's /tmp
                       "FAKE_AGENT_SCENARIO": scenario.read_text(),
                       "FAKE_AGENT_FILES": str(stage_files(folder)),
                       # agents get an allow-list: the fixture's own variables are passed on
                       "BENCHRIG_PASS_ENV": "FAKE_AGENT_LOG,FAKE_AGENT_SCENARIO,FAKE_AGENT_FILES"})
    task = load_task(ROOT / "tasks" / "lru-cache.md")
    driver = get_driver("claude")
    found = []
    for index in range(attempts + 1):
        log.unlink(missing_ok=True)
        began = time.perf_counter()
        attempt = run_attempt(task, "sonnet", driver, None, settings_for(task, Overrides()),
                              folder / "results", agent="claude")
        total = time.perf_counter() - began
        assert attempt.result["result"] == "pass", attempt.result["notes"]
        argv = next(entry["argv"] for entry in logged(log, attempt.path) if "argv" in entry)
        # the bare run gets what the driver sets itself (IS_SANDBOX: claude refuses root without)
        env = {**os.environ, **(attempt.result["settings"].get("agent_fixed_env") or {})}
        bare, confined = 0.0, 0.0
        with tempfile.TemporaryDirectory() as workspace:
            wrapped = confine([str(FIXTURE), *argv], workspace=Path(workspace),
                              home=Path(workspace))
            for command in ([str(FIXTURE), *argv], wrapped.argv):
                began = time.perf_counter()
                subprocess.run(command, cwd=workspace, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True, env=env)
                bare, confined = confined, time.perf_counter() - began
        if index == 0:
            continue  # the first attempt also asks the CLI for its version, once per process
        metrics = attempt.result["metrics"]
        found.append({"total": total, "bare": bare, "confined": confined,
                      "wall": metrics["wall_s"], "check": metrics["check_s"]})
    return found


def logged(log: Path, result: Path) -> list[dict[str, Any]]:
    """The fixture's log: its file unconfined, else the copies it printed on stderr (kept in
    the attempt's sidecar; confined, the file went to its private /tmp)."""
    if log.exists():
        return [json.loads(line) for line in log.read_text().splitlines()]
    prefix = "fake-agent-log: "
    records = map(json.loads, result.with_suffix(".transcript.jsonl").read_text().splitlines())
    return [json.loads(r["text"][len(prefix):]) for r in records
            if r.get("kind") == "stderr" and r.get("text", "").startswith(prefix)]


def parse_cost(scenario: Path) -> float:
    """Seconds per line for what BenchRig does with each line in process: JSON decoding, the
    parser, and the sidecar record (the pipe reads are in the spawn figures)."""
    lines = [line for line in scenario.read_text().splitlines() if "_fixture" not in line]
    began = time.perf_counter()
    parser, kept = ClaudeParser(streaming=True), []
    for index, line in enumerate(lines):
        event = json.loads(line)
        parser.event(index * 0.001, event)
        kept.append({"kind": "event", "t_s": index * 0.001, "event": parser.record(event)})
    parser.finish()
    return (time.perf_counter() - began) / len(lines)


def start_up(rounds: int = 50) -> tuple[list[float], list[float]]:
    """`/bin/true` as it is and as BenchRig would confine an agent: seconds per start."""
    plain: list[float] = []
    confined: list[float] = []
    with tempfile.TemporaryDirectory() as workspace:
        wrapped = confine(["/bin/true"], workspace=Path(workspace), home=Path(workspace)).argv
        for _ in range(rounds):
            for argv, times in ((["/bin/true"], plain), (wrapped, confined)):
                began = time.perf_counter()
                subprocess.run(argv, cwd=workspace, check=True)
                times.append(time.perf_counter() - began)
    return plain, confined


def row(label: str, values: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    med = statistics.median(values) * scale
    return (f"| {label} | {med:.1f} {unit} | {min(values) * scale:.1f}–"
            f"{max(values) * scale:.1f} {unit} | {len(values)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--lines", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        long_file = long_stream(Path(folder) / "long.jsonl", args.lines)
        short = pairs(SUCCESS, args.attempts, Path(folder))
        long = pairs(long_file, args.attempts, Path(folder))
        per_line = [parse_cost(long_file) for _ in range(5)]
    plain, confined = start_up()
    lines_short = sum(1 for line in SUCCESS.read_text().splitlines() if "_fixture" not in line)

    def overhead(found: list[dict[str, Any]]) -> list[float]:
        return [p["total"] - p["bare"] for p in found]

    print("| measure | median | range | n |\n|---|---|---|---|")
    print(row(f"attempt overhead beyond the agent ({lines_short} lines): attempt − bare run",
              overhead(short)))
    print(row("… around the agent's run (workspace, read-back, check, result): attempt − "
              "wall_s", [p["total"] - p["wall"] for p in short]))
    print(row("… … of which checking (sandbox, hidden tests)", [p["check"] for p in short]))
    print(row("… during the agent's run (spawn, reading, parsing): wall_s − bare run",
              [p["wall"] - p["bare"] for p in short]))
    print(row("… … of which confinement (bubblewrap): the bare run confined − bare run",
              [p["confined"] - p["bare"] for p in short]))
    print(row("bare run of the fixture (the agent's own runtime)", [p["bare"] for p in short]))
    print(row(f"attempt overhead beyond the agent ({lines_short + args.lines} lines)",
              overhead(long)))
    print(row("… around the agent's run: attempt − wall_s",
              [p["total"] - p["wall"] for p in long]))
    print(row("decode + parse + record one line, in process", per_line, "µs", 1e6))
    print(row("start `/bin/true`", plain))
    print(row("start `/bin/true` confined as an agent (bubblewrap)", confined))


if __name__ == "__main__":
    main()
