"""Writes a pack folder from converted problems: idempotent, never over a file edited by hand."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.core.task import TEST_SUFFIX
from benchrig.packs import PACK_FILE, REFERENCES, VERIFIED, dropped
from benchrig.packs.convert import PER_ASSERTION, PER_PROBLEM, Converted, PackError
from benchrig.packs.source import Source
from benchrig.resultio.files import write_atomic

PACK_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
CHECKS_RULE = ("one check per assertion where the suite's test is nothing but assert "
               "statements, each of which runs alone exactly as written; otherwise one check "
               "per problem (the suite's whole test)")

DROPPED_RULE = ("an assertion that reads neither the entry point nor a name imported from the "
                "candidate (`assert True, ...`) tests no code: left out, counted per task")


@dataclass(frozen=True)
class Imported:
    """What an import did."""

    name: str
    folder: Path
    problems: int
    per_assertion: int
    written: int
    removed: int
    dropped: int = 0  # assertions that never touch the candidate, left out

    def line(self) -> str:
        state = (f"{self.written} file(s) written, {self.removed} removed"
                 if self.written or self.removed else "already up to date")
        return (f"{self.name}: {self.problems} tasks in {self.folder} ({self.per_assertion} "
                f"checked per assertion, {self.problems - self.per_assertion} per problem; "
                f"{self.dropped} assertion(s) that never touch the candidate dropped); "
                f"{state}")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pack_files(name: str, suite: str, source: Source, licence: str | None,
               convert: Callable[[dict[str, Any], str], Converted]) -> dict[str, str]:
    """Every file of the pack, relative path → text; pack.json last."""
    if not PACK_NAME.match(name):
        raise UsageError(f"{name!r} is not a pack name (lowercase letters, digits, - and _)")
    problems = [convert(record, name) for record in source.records]
    seen: set[str] = set()
    files: dict[str, str] = {}
    for p in problems:
        if p.id in seen:
            raise PackError(f"{source.file}: two records give the task id {p.id}")
        seen.add(p.id)
        files[f"{p.id}.md"] = p.task
        files[f"{p.id}{TEST_SUFFIX}"] = p.test
        files[f"{REFERENCES}/{p.id}.md"] = p.reference
        files[f"{REFERENCES}/{p.id}.broken.md"] = p.broken
    meta = {
        "name": name,
        "suite": suite,
        "source": {"file": source.file, "sha256": source.sha256, "package": source.package},
        "licence": licence,
        "problems": len(problems),
        "task_ids": {p.id: p.source_id for p in problems},
        "checks": {"rule": CHECKS_RULE,
                   PER_ASSERTION: [p.id for p in problems if p.split == PER_ASSERTION],
                   PER_PROBLEM: [p.id for p in problems if p.split == PER_PROBLEM],
                   "dropped_rule": DROPPED_RULE,
                   "dropped": {p.id: p.dropped for p in problems if p.dropped}},
        "difficulty": "not rated by the suite: `medium`, because the task format needs one",
        "references": f"{REFERENCES}/<id>.md (reference answer), {REFERENCES}/<id>.broken.md "
                      "(the signature raising NotImplementedError); replayed by "
                      f"`benchrig verify {name}`",
        "files": {path: digest(text) for path, text in sorted(files.items())},
    }
    files[PACK_FILE] = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
    return files


def _present(folder: Path) -> dict[str, Path]:
    """The files of a pack folder an import answers for (not `benchrig verify`'s results)."""
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != PACK_FILE
            and p.relative_to(folder).parts[0] != VERIFIED}


def _edited(folder: Path, present: dict[str, Path]) -> list[str]:
    """Files of `folder` that the last import did not write as they are now."""
    try:
        recorded = json.loads((folder / PACK_FILE).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return sorted(present) or []
    if not isinstance(recorded, dict):
        return sorted(present)
    return [rel for rel, path in present.items()
            if recorded.get(rel) != hashlib.sha256(path.read_bytes()).hexdigest()]


def write_pack(folder: Path, files: dict[str, str], force: bool) -> tuple[int, int]:
    """Make `folder` hold exactly `files`; (files written, files removed). Refuses, unless
    `force`, when a file there was edited or added since the last import."""
    present = _present(folder) if folder.is_dir() else {}
    if folder.is_dir() and (present or (folder / PACK_FILE).exists()):
        edited = _edited(folder, present)
        if edited and not force:
            shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if
                                             len(edited) > 5 else "")
            raise UsageError(f"{folder}: {len(edited)} file(s) changed since the last import "
                             f"({shown}); --force overwrites them")
    written = 0
    for rel, text in files.items():  # pack.json is last: a broken import leaves it stale
        path = folder / rel
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            write_atomic(path, text)
            written += 1
    stale = [path for rel, path in present.items() if rel not in files]
    for path in stale:
        path.unlink()
    return written, len(stale)


def summary(name: str, folder: Path, written: int, removed: int) -> Imported:
    meta = json.loads((folder / PACK_FILE).read_text(encoding="utf-8"))
    return Imported(name, folder, meta["problems"], len(meta["checks"][PER_ASSERTION]),
                    written, removed, dropped(meta))
