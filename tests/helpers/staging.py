"""The files the fixture agents' scenarios copy, handed to them in their environment.

Standard library only: bench/agents.py imports it too.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = Path("tests") / "fixtures" / "solutions"


def stage_files(folder: Path | None = None) -> str:
    """The files scenarios copy (tests/fixtures/solutions), as FAKE_AGENT_FILES carries them:
    a JSON object of their texts by path. A confined fixture can see neither the checkout nor
    the host's /tmp (`folder`, kept for callers, is no longer needed)."""
    return json.dumps({str(SOLUTIONS / path.name): path.read_text()
                       for path in sorted((ROOT / SOLUTIONS).iterdir()) if path.is_file()})
