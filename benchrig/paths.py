"""Where BenchRig finds its tasks, schemas and results (overridable by environment)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"


def tasks_dir() -> Path:
    return Path(os.environ.get("BENCHRIG_TASKS_DIR", ROOT / "tasks"))


def results_dir() -> Path:
    return Path(os.environ.get("BENCHRIG_RESULTS_DIR", ROOT / "results"))
