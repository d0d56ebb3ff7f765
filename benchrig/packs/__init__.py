"""Task packs: standard suites (HumanEval, MBPP-shaped files) imported as tasks/<pack>/ folders.

A pack is a folder of ordinary task files with `pack.json` (name, source, its hash, licence,
how the checks were split, the files written) and `.references/` (each problem's reference
and deliberately broken answer, replayable; hidden from agents with the rest of the folder).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchrig.paths import tasks_dir

PACK_FILE = "pack.json"
REFERENCES = ".references"


def pack_dir(name: str, base: Path | None = None) -> Path:
    return (base or tasks_dir()) / name


def installed(base: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every imported pack under `base` (tasks/ by default): name → its pack.json."""
    found: dict[str, dict[str, Any]] = {}
    root = base or tasks_dir()
    for meta in sorted(root.glob(f"*/{PACK_FILE}")):
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and data.get("name") == meta.parent.name:
            found[meta.parent.name] = data
    return found
