"""`benchrig import jsonl|csv FILE --template T --expected FIELD`: a data file → one dataset task
(tasks/<id>.md beside a copy of the file), written only once every row loads."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from benchrig.core.errors import TaskError, UsageError
from benchrig.dataset import DATASET_CAP, FIELD
from benchrig.packs.convert import task_text
from benchrig.paths import imports_dir
from benchrig.resultio.files import Unreadable, read_regular
from benchrig.spec import load_samples
from benchrig.textsafe import printable

KINDS = ("jsonl", "csv")
TEMPLATE_CAP = 1 << 20  # bytes of a template file
ANSWERED = ("reasoning", "polish")  # suites whose check reads one final answer


def task_id(stem: str) -> str:
    """A task id from a file name: lower case, runs of other characters as one dash."""
    found = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")
    return found or "dataset"


def import_dataset(kind: str, source: Path, template: str, expected: str,
                   id_field: str | None = None, suite: str = "reasoning",
                   name: str | None = None, base: Path | None = None,
                   force: bool = False) -> tuple[Path, int]:
    """Write the task and its data under `base` (tasks/ by default); the task file and how
    many samples it has. `template` is the prompt, or a file holding it."""
    if kind not in KINDS:
        raise UsageError(f"import {kind}: give jsonl or csv")
    if source.suffix != f".{kind}":
        raise UsageError(f"import {kind}: {printable(str(source))} is not a .{kind} file")
    if suite not in ANSWERED:
        raise UsageError(f"--suite {printable(suite)}: an imported dataset is checked by its "
                         f"expected answer: choose one of {', '.join(ANSWERED)}")
    for flag, field in (("--expected", expected), ("--id-field", id_field)):
        if field is not None and not re.fullmatch(FIELD, field):
            raise UsageError(f"{flag} {printable(field)}: not a field name")
    if Path(template).suffix in (".md", ".txt") and Path(template).is_file():
        template = Path(template).read_bytes()[:TEMPLATE_CAP].decode("utf-8", "replace")
    ident = task_id(name or source.stem)
    folder = base or imports_dir()
    task, data = folder / f"{ident}.md", folder / f"{ident}.{kind}"
    if not force and (task.exists() or data.exists()):
        raise UsageError(f"{printable(str(task))} or its data exists: --force replaces them")
    meta: dict[str, object] = {
        "id": ident, "suite": suite, "language": "en", "difficulty": "medium",
        "tags": ["dataset"], "timeout_s": 120, "dataset": data.name,
        **({"id_field": id_field} if id_field else {}),
        "expected": f"{{{expected}}}", "check": {"type": "final_answer"}}
    text = task_text(meta, template)
    with tempfile.TemporaryDirectory(prefix="benchrig-import-") as staging:
        trial = Path(staging)
        (trial / task.name).write_text(text, encoding="utf-8")
        try:  # a regular file of at most DATASET_CAP: a link to /dev/zero is never copied
            (trial / data.name).write_bytes(read_regular(source, DATASET_CAP, follow=True))
        except Unreadable as exc:
            raise UsageError(f"{printable(str(source))}: {exc}") from None
        try:
            samples = load_samples(trial / task.name)
        except TaskError as exc:  # said against the file the user gave
            raise TaskError([p.replace(str(trial / task.name), str(source))
                             for p in exc.problems]) from None
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(trial / data.name, data)
        task.write_text(text, encoding="utf-8")
    return task, len(samples)
