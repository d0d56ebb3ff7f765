"""Where `report --html`'s time goes, in one process: its phases beside a bare read and
`summary`'s lean load, best of `--rounds` on the CPU clock.

    .venv/bin/python bench/html_steps.py FOLDER [--rounds 3]

FOLDER holds result files (bench/summary.py --folder makes them). Run it from the tree to
measure (`cd TREE && PYTHONPATH=. .venv/bin/python …/html_steps.py FOLDER`): the phases
are a bare read (`json.loads` of every file), the records lean (summary's) and whole
(report's), whole with each drill-down spooled as the file is read (`viewer.Spool.add`),
`build` (groups, table rows, scorecards), the page's head (`render_html.context`), the
sample browser's rows and drill-downs (`island_parts`) and the whole page written, the
records frozen out of the collector's sight before these, as the command does.
Whole-process ratios are bench/summary.py's; these say which part is which (issue 27).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path.cwd()  # the tree measured: the one it is run from
sys.path.insert(0, str(ROOT))

from benchrig.report import render_html  # noqa: E402
from benchrig.report.build import build  # noqa: E402
from benchrig.report.viewer import Spool, island_parts  # noqa: E402
from benchrig.resultio.files import freeze_loaded, load_records  # noqa: E402

Timer = Callable[[str, Callable[[], Any]], Any]


def one_round(folder: Path, page_file: Path, timed: Timer) -> None:
    """Every phase once, each timed by `timed` under its name."""
    timed("bare read (json.loads)", lambda: [
        json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))])
    timed("records, lean (summary's)", lambda: load_records([folder], None, False))
    timed("records, whole", lambda: load_records([folder], None, True))
    with tempfile.TemporaryFile() as file:
        spool = Spool(file)
        records = timed("records, whole + Spool.add",
                        lambda: load_records([folder], spool.add, True)).records
        freeze_loaded(False)  # as the command does: no collection walks the records again
        report = timed("build", lambda: build(records))
        timed("page head (context)", lambda: render_html.context(report, data=""))
        timed("rows and drill-downs (island)", lambda: sum(
            len(p) for p in island_parts(render_html._data(report, None, spool))))

        def page() -> None:
            with page_file.open("w", encoding="utf-8") as out:
                out.writelines(render_html.render_html_parts(report, spool=spool))

        timed("whole page written", page)
    gc.unfreeze()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder: Path = args.folder
    best: dict[str, float] = {}

    def timed(name: str, step: Callable[[], Any]) -> Any:
        began = time.process_time()
        out = step()
        best[name] = min(best.get(name, float("inf")), time.process_time() - began)
        return out

    render_html._page("report.html.j2")  # the template's compilation: once a process
    with tempfile.TemporaryDirectory(prefix="benchrig-html-steps-") as tmp:
        for _ in range(args.rounds):
            one_round(folder, Path(tmp) / "report.html", timed)
            gc.collect()
    for name, seconds in best.items():
        print(f"{name:32s} {seconds:7.3f} s of CPU")
    files = sum(1 for _ in folder.glob("*.json"))
    spooled = best["records, whole + Spool.add"] - best["records, whole"]
    print(f"Spool.add {spooled / files * 1e6:.1f} µs a file; {files} files")


if __name__ == "__main__":
    main()
