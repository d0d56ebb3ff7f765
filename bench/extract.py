"""Code extraction against the number of fences in an answer.

    .venv/bin/python bench/extract.py [--rounds 15]

Answers of 1 to 164 Python blocks with a line of prose between them (what a model that
shows its work step by step writes), extracted whole (`extract_code`, <think> split
included); the figure is the median (and range) of `--rounds` runs. The target (issue
12) is 164 fences in under 5 ms. The second table is the case that stays costly: Python
blocks that do not parse, each of which runs on through every later fence looking for one
that makes it parse (see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.checks.extract import extract_code  # noqa: E402

TARGET_MS = 5.0


def answer(blocks: int, parses: bool = True) -> str:
    head = "def f{i}(x):" if parses else "def f{i}(x:"
    return "".join(f"Step {i}:\n\n```python\n{head.format(i=i)}\n    return x + {i}\n```\n\n"
                   for i in range(blocks))


def timed_ms(text: str, rounds: int) -> str:
    """Median (min–max) milliseconds of `rounds` extractions of `text`."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        extract_code(text, ("f0",))
        times.append((time.perf_counter() - began) * 1000)
    return f"{statistics.median(times):.2f} ms ({min(times):.2f}–{max(times):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    print(f"median (range) of {rounds}; target {TARGET_MS:.0f} ms for 164 fences\n")
    print("| fences | extract_code |\n|---|---|")
    for blocks in (1, 10, 40, 80, 164):
        print(f"| {blocks} | {timed_ms(answer(blocks), rounds)} |")
    print("\n| blocks that do not parse | extract_code |\n|---|---|")
    for blocks in (10, 20, 40):
        print(f"| {blocks} | {timed_ms(answer(blocks, parses=False), 3)} |")


if __name__ == "__main__":
    main()
