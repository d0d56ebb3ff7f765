"""Fixture CLIs standing in for agents (tests only), and the files their scenarios copy."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stage_files(folder: Path) -> Path:
    """The files scenarios copy (tests/solutions), staged under `folder` where a confined
    fixture can read them: it cannot see the checkout. Pass the result as FAKE_AGENT_FILES."""
    staged = folder / "fixture-files"
    if not staged.exists():
        shutil.copytree(ROOT / "tests" / "solutions", staged / "tests" / "solutions")
    return staged
