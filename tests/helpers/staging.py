"""The files the fixture agents' scenarios copy, staged where a confined fixture can read them.

Standard library only: bench/agents.py imports it too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = Path("tests") / "fixtures" / "solutions"


def stage_files(folder: Path) -> Path:
    """The files scenarios copy (tests/fixtures/solutions), staged under `folder`: a confined
    fixture cannot see the checkout. Pass the result as FAKE_AGENT_FILES."""
    staged = folder / "fixture-files"
    if not staged.exists():
        shutil.copytree(ROOT / SOLUTIONS, staged / SOLUTIONS)
    return staged
