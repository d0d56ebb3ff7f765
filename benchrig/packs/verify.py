"""`benchrig verify <pack>`: every reference answer must pass, every broken one must fail.

Each answer is replayed through the normal pipeline (`runner.run_attempt` with the replay
driver: prompt, extraction, the sandboxed hidden tests, a validated result file), all
through one SandboxPool, the way `benchrig run` does.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchrig.core.errors import UsageError
from benchrig.drivers import get_driver
from benchrig.packs import PACK_FILE, REFERENCES, pack_dir
from benchrig.runner import Overrides, run_attempt, settings_for
from benchrig.sandbox import Confinement, SandboxPool
from benchrig.spec import load_tasks, task_paths
from benchrig.textsafe import printable

# (which answers, the file suffix in .references/, the verdict every one must get)
ANSWERS = (("reference", ".md", "pass"), ("broken", ".broken.md", "fail"))


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
        for r in self.rows:
            lines.extend(f"- {r.answers}: {printable(u)}" for u in r.unexpected[:50])
        return "\n".join(lines) + "\n"


def verify_pack(name: str, results_dir: Path, confinement: Confinement | None = None,
                base: Path | None = None) -> Verification:
    """Replay every reference and every broken answer of pack `name`; the results and the
    table are saved in results_dir/verify/<pack>/<UTC time>/."""
    folder = pack_dir(name, base)
    if not (folder / PACK_FILE).is_file():
        raise UsageError(f"no imported pack {name!r} in {folder.parent}: run `benchrig import "
                         f"{name}` first")
    tasks = load_tasks(task_paths([str(folder)]))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    out = results_dir / "verify" / name / stamp
    driver = get_driver("replay")
    rows: list[Row] = []
    isolation: set[str] = set()
    with SandboxPool(confinement) as pool:
        for answers, suffix, expected in ANSWERS:
            began = time.perf_counter()
            verdicts: Counter[str] = Counter()
            unexpected: list[str] = []
            passed = total = 0
            for task in tasks:
                answer = folder / REFERENCES / f"{task.id}{suffix}"
                if not answer.is_file():
                    verdicts["error"] += 1
                    unexpected.append(f"{task.id}: {REFERENCES}/{answer.name} is missing")
                    continue
                settings = settings_for(task, Overrides(), model=answers)
                result = run_attempt(task, answers, driver, str(answer), settings, out,
                                     agent="replay", sandboxes=pool).result
                verdicts[result["result"]] += 1
                passed += result["checks"]["passed"]
                total += result["checks"]["total"]
                if result.get("isolation"):
                    isolation.add(str(result["isolation"]))
                if result["result"] != expected:
                    unexpected.append(f"{task.id}: {result['result']} — {result['notes']}")
            rows.append(Row(answers, expected, len(tasks), dict(verdicts), passed, total,
                            time.perf_counter() - began, tuple(unexpected)))
    report = Verification(name, tuple(rows), tuple(sorted(isolation)), out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(report.table(), encoding="utf-8")
    return report
