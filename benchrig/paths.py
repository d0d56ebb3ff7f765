"""Where BenchRig finds its tasks, schemas and results (overridable by environment)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The schemas and bundled tasks are package data, so a wheel carries them; the checkout's
# top-level `schema/` and `tasks/` are symbolic links to these folders.
DATA_DIR = Path(__file__).resolve().parent / "data"
SCHEMA_DIR = DATA_DIR / "schema"
BUNDLED_TASKS_DIR = DATA_DIR / "tasks"


def in_checkout() -> bool:
    """Whether BenchRig runs from its source checkout (or an editable install of it), rather
    than from an installed wheel."""
    return (ROOT / "pyproject.toml").is_file() and (ROOT / "benchrig" / "paths.py").is_file()


def tasks_dir() -> Path:
    return Path(os.environ.get("BENCHRIG_TASKS_DIR", BUNDLED_TASKS_DIR))


def imports_dir() -> Path:
    """Where `benchrig import` writes (a pack as `<pack>/`, a dataset task as its file) and
    where `run`, `run --pack` and `verify` find what it wrote: the tasks folder in the
    checkout (or BENCHRIG_TASKS_DIR); installed, `./tasks/packs` beside `./results`, since
    an installed package's folder is no place for a user's data."""
    if "BENCHRIG_TASKS_DIR" in os.environ or in_checkout():
        return tasks_dir()
    return Path.cwd() / "tasks" / "packs"


def results_dir() -> Path:
    """The checkout's `results/` when running from the checkout; else `./results` of the
    current folder, since an installed package's own folder is no place for results."""
    default = ROOT / "results" if in_checkout() else Path.cwd() / "results"
    return Path(os.environ.get("BENCHRIG_RESULTS_DIR", default))
