"""Where a view's time goes, in one process: each step of reading one result file, per file,
beside a plain read, and the phases of a summary (loading, freezing, rendering).

    .venv/bin/python bench/load_steps.py FOLDER [--before-tree DIR]

FOLDER holds result files (bench/summary.py --folder makes them). Each step runs over every
file, best of three, on the CPU clock: listing the folder (by name, and by glob as the bare
read does), opening without following links and checking the
descriptor (`result.read_regular`), a plain `read_text` for comparison, the nesting and
long-number scans, orjson and json, the compiled schema check, `plausible.credible` and the
record (`record.from_json`); then the phases of `summary`'s work. Whole-process ratios are
bench/summary.py's; these say which part of the per-file cost is which (issue 27).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchrig.plausible import credible  # noqa: E402
from benchrig.resultio import files as result  # noqa: E402
from benchrig.resultio.record import Shared, from_json  # noqa: E402
from benchrig.schemas import problems  # noqa: E402


def per_file(name: str, step: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    """`step` over every item, best of three rounds: microseconds a file, printed."""
    best = float("inf")
    out: list[Any] = []
    for _ in range(3):
        began = time.process_time()
        out = [step(item) for item in items]
        best = min(best, time.process_time() - began)
    print(f"| {name} | {1e6 * best / len(items):.1f} µs |")
    return out


def listing(count: int, name: str, step: Callable[[], Any]) -> None:
    """`step` (a whole folder's listing), best of three: microseconds a file, printed."""
    best = float("inf")
    for _ in range(3):
        began = time.process_time()
        step()
        best = min(best, time.process_time() - began)
    print(f"| {name} | {1e6 * best / count:.1f} µs |")


def phases(folder: Path) -> None:
    """The CPU seconds of loading, freezing and rendering a summary of `folder`."""
    from benchrig.packs.scores import pack_tasks
    from benchrig.report import render

    began = time.process_time()
    loaded = result.load_records([folder])
    loading = time.process_time() - began
    result.freeze_loaded(bool(loaded.rejected))
    frozen = time.process_time() - began - loading
    render(loaded.records, "table", False, "model", False, pack_tasks())
    rendered = time.process_time() - began - loading - frozen
    print(f"\n{len(loaded.records)} results: loading {loading:.2f} s, freezing {frozen:.2f} s, "
          f"rendering the summary {rendered:.2f} s of CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    import orjson

    files = result._files([args.folder])
    gc.disable()  # as load_records reads: the collector paused
    print(f"{len(files)} files\n\n| step | per file |\n|---|---|")
    listing(len(files), "listing the folder by name (result._listed)",
            lambda: result._listed([args.folder]))
    listing(len(files), "listing it by glob, sorted (the bare read's)",
            lambda: sorted(args.folder.glob("*.json")))
    data = per_file("open, check the descriptor, read (read_regular)",
                    lambda f: result.read_regular(f, result.RESULT_CAP), files)
    per_file("a plain read_text (the bare read's)", lambda f: f.read_text("utf-8"), files)
    per_file("nesting scan", lambda d: result.nested_deeper(d, result.MAX_NESTING), data)
    per_file("long-number scan", result._long_whole_number, data)
    parsed = per_file("orjson.loads", orjson.loads, data)
    per_file("json.loads (the bare read's)", json.loads, data)
    per_file("schema check", lambda p: problems("result", p), parsed)
    per_file("plausible.credible", lambda p: credible(p["metrics"]), parsed)
    shared = Shared()
    per_file("record.from_json, lean and shared as summary reads (credible included)",
             lambda p: from_json(p, None, False, shared), parsed)
    del data, parsed
    gc.enable()
    phases(args.folder)


if __name__ == "__main__":
    main()
