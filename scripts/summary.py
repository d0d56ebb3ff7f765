#!/usr/bin/env python3
"""Per-model table, then per-suite scorecards, from results/*.json:
`summary.py [--format table|markdown|csv] [--table-only] [paths]`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchrig.cli import main

if __name__ == "__main__":
    main(["summary", *sys.argv[1:]])
