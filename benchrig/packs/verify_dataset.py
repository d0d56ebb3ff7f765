"""`verify` for a dataset task: each row's reference and broken answers, filled from the row by
templates (HumanEval: `{prompt}{canonical_solution}`), replayed like a pack's (packs/verify.py)."""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from pathlib import Path

from benchrig.checks import load_checks
from benchrig.core.task import TaskSpec, sandboxed
from benchrig.dataset import read_rows, template
from benchrig.drivers import get_driver
from benchrig.packs.verify import WORKERS, Row, Verification, _replayed
from benchrig.sandbox import Confinement, SandboxPool
from benchrig.spec import load_samples, load_task

# (which answers, their template over a row's fields, the verdict every one must get)
Answers = Sequence[tuple[str, str, str]]


def _answer_files(task: TaskSpec, samples: list[TaskSpec], text: str, folder: Path
                  ) -> list[Path]:
    """Each sample's answer, filled from its row, as a file the replay driver reads."""
    filled = template(text)
    found, _ = read_rows(task.dataset_path or Path(), task.frontmatter.get("id_field"))
    rows = {row.sample_id: row for row in found}
    files = []
    for index, sample in enumerate(samples):
        path = folder / f"{index:06d}.md"
        path.write_text(filled.fill(rows[str(sample.sample_id)].values), encoding="utf-8")
        files.append(path)
    return files


def verify_dataset(task: Path, answers: Answers, results_dir: Path,
                   confinement: Confinement | None = None,
                   workers: int = WORKERS) -> Verification:
    """Replay every kind of answer for every sample of `task` through run_attempt."""
    samples, dataset = load_samples(task), load_task(task)
    driver = get_driver("replay")
    load_checks()
    rows: list[Row] = []
    isolation: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="benchrig-verify-") as staging, \
            SandboxPool(confinement, depth=workers,
                        expected=sandboxed(samples) * len(answers)) as pool, \
            ThreadPoolExecutor(workers, thread_name_prefix="benchrig-verify") as attempts:
        for name, text, expected in answers:
            folder = Path(staging) / name
            folder.mkdir()
            files = _answer_files(dataset, samples, text, folder)
            began = time.perf_counter()
            results = list(attempts.map(_replayed, samples, repeat(name), files,
                                        repeat(driver), repeat(results_dir), repeat(pool)))
            isolation |= {str(r["isolation"]) for r in results if r.get("isolation")}
            rows.append(Row(
                name, expected, len(samples), dict(Counter(str(r["result"]) for r in results)),
                sum(r["checks"]["passed"] for r in results),
                sum(r["checks"]["total"] for r in results), time.perf_counter() - began,
                tuple(f"{s.sample_id}: {r['result']} — {r['notes']}"
                      for s, r in zip(samples, results, strict=True)
                      if r["result"] != expected)))
    report = Verification(task.stem, tuple(rows), tuple(sorted(isolation)), results_dir,
                          imported=False)
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "table.md").write_text(report.table(), encoding="utf-8")
    return report
