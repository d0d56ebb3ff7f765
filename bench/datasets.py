"""Dataset tasks: a 10,000-row task loaded and validated, and a sample's replay attempt against a
one-file task's.

    .venv/bin/python bench/datasets.py [--rows 10000] [--repeats 5] [--attempts 200]

1. Load: a reasoning task over N JSONL rows (and the same as CSV), written to a temporary
   folder, loaded with every row validated (`spec.load_samples`: read, template, schema and
   check per row) — the in-process work `benchrig validate` does, best and median of
   `--repeats`; and `benchrig validate` as a whole process (interpreter start-up included).
2. Per-sample overhead: `--attempts` replay attempts (`runner.run_attempt`, result and sidecar
   written) of one sample of a dataset task and of the same task as a one-file task,
   alternated one by one so both see the same noise; the ratio of the medians. The target
   (issue 25): a dataset load < 1 s at 10,000 rows, a sample within 10 % of a one-file
   attempt. Figures go to docs/benchmarks.md ("Dataset tasks").
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.drivers import get_driver  # noqa: E402
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for  # noqa: E402
from benchrig.spec import load_samples, load_task  # noqa: E402

HEAD = """---
id: {id}
suite: reasoning
language: en
difficulty: easy
tags: [bench]
timeout_s: 60
{data}expected: "{answer}"
evaluator: numeric
check:
  type: final_answer
---

# Sum {q}

What is {q}? Answer with the number only.
"""


def write(folder: Path, rows: int) -> tuple[Path, Path, Path]:
    """The JSONL and CSV dataset tasks of `rows` rows, and a one-file task like one row."""
    with (folder / "sums.jsonl").open("w", encoding="utf-8") as out:
        for n in range(rows):
            out.write(json.dumps({"id": f"s{n}", "q": f"{n} + {n + 1}", "a": str(2 * n + 1),
                                  "note": "Київ" if n % 7 else ""}) + "\n")
    with (folder / "sums.csv").open("w", encoding="utf-8") as out:
        out.write("id,q,a,note\n")
        out.writelines(f"s{n},{n} + {n + 1},{2 * n + 1},\n" for n in range(rows))
    for name, data in (("sums", "sums.jsonl"), ("sumscsv", "sums.csv")):
        (folder / f"{name}.md").write_text(HEAD.format(
            id=name, data=f"dataset: {data}\nid_field: id\n", answer="{a}", q="{q}"),
            encoding="utf-8")
    one = folder / "one"
    one.mkdir()
    (one / "sums.md").write_text(HEAD.format(id="sums", data="", answer="1", q="0 + 1"),
                                 encoding="utf-8")
    return folder / "sums.md", folder / "sumscsv.md", one / "sums.md"


def load_times(task: Path, repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each load (CPU: less moved by a busy machine)."""
    walls, cpus = [], []
    for _ in range(repeats):
        began, cpu = time.perf_counter(), time.process_time()
        load_samples(task)
        walls.append(time.perf_counter() - began)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--attempts", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        jsonl, csv_task, one = write(folder, args.rows)
        for name, task in (("jsonl", jsonl), ("csv", csv_task)):
            times, cpus = load_times(task, args.repeats)
            print(f"load+validate {args.rows} rows ({name}): wall best {min(times):.3f} s, "
                  f"median {statistics.median(times):.3f} s; CPU best {min(cpus):.3f} s")
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "benchrig.cli", "validate", str(jsonl)],
                              cwd=ROOT, capture_output=True, text=True, check=False)
        print(f"benchrig validate (whole process): {time.perf_counter() - began:.3f} s — "
              f"{done.stdout.strip() or done.stderr.strip()}")
        sample = load_samples(jsonl)[0]
        plain = load_task(one)
        answer = folder / "answer.md"
        answer.write_text("Final answer: 1\n", encoding="utf-8")
        driver = get_driver("replay")
        walls: dict[str, list[float]] = {"sample": [], "one-file": []}
        for index in range(args.attempts):
            for name, spec in (("sample", sample), ("one-file", plain)):
                out = folder / "results" / name
                began = time.perf_counter()
                result = run_attempt(spec, "m", driver, str(answer),
                                     settings_for(spec, Overrides()), out, agent="replay").result
                walls[name].append(time.perf_counter() - began)
                assert result["result"] == "pass", result["notes"]
            del index
        a, b = (statistics.median(walls[k]) for k in ("sample", "one-file"))
        print(f"replay attempt, median of {args.attempts}: sample {1000 * a:.2f} ms, one-file "
              f"{1000 * b:.2f} ms, ratio {a / b:.3f}")


if __name__ == "__main__":
    main()
