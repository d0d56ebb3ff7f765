"""Task packs: standard suites (HumanEval, MBPP-shaped files) imported as tasks/<pack>/ folders.

A pack is a folder of ordinary task files with `pack.json` (name, source, its hash, licence,
how the checks were split, the files written) and `.references/` (each problem's reference
and deliberately broken answer, replayable; hidden from agents with the rest of the folder).
"""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

from benchrig.paths import imports_dir, tasks_dir

PACK_FILE = "pack.json"
REFERENCES = ".references"
VERIFIED = ".verify"  # `benchrig verify`'s results: they hold the reference answers too


def dropped(meta: dict[str, Any]) -> int:
    """How many assertions the import left out for never touching the candidate."""
    found = meta.get("checks", {}).get("dropped") if isinstance(meta, dict) else None
    return sum(n for n in found.values() if type(n) is int) if isinstance(found, dict) else 0


def pack_dir(name: str, base: Path | None = None) -> Path:
    """The pack's folder under `base` (default: where imports go, paths.imports_dir)."""
    return (base or imports_dir()) / name


def installed(base: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every imported pack under `base` (paths.imports_dir by default): name → its
    pack.json."""
    found: dict[str, dict[str, Any]] = {}
    root = base or imports_dir()
    for meta in sorted(root.glob(f"*/{PACK_FILE}")):
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and data.get("name") == meta.parent.name:
            found[meta.parent.name] = data
    return found


def expand(selectors: list[str], base: Path | None = None) -> list[str]:
    """Task selectors with a pack's name replaced by its folder and the id of a task in a
    pack by its file (a bundled task of that name wins: bundled ids keep their meaning);
    an imported dataset task by its file. Bundled tasks are looked for under `base` (default
    the tasks folder), imports under `base` (default paths.imports_dir)."""
    root = base or tasks_dir()
    imports = base or imports_dir()
    found: list[str] = []
    for item in selectors:
        if "/" in item or (root / f"{item}.md").exists() or Path(item).exists():
            found.append(item)
        elif (imports / item / PACK_FILE).is_file():
            found.append(str(imports / item))
        elif (imports / f"{item}.md").is_file():
            found.append(str(imports / f"{item}.md"))
        else:
            inside = [p for p in imports.glob(f"*/{glob.escape(item)}.md")
                      if (p.parent / PACK_FILE).is_file()]
            found.append(str(inside[0]) if len(inside) == 1 else item)
    return found
