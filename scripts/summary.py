#!/usr/bin/env python3
"""Per-model table, then per-suite scorecards, from results/*.json:
`summary.py [--format table|markdown|csv] [--table-only] [paths]`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"

# Run under the checkout's .venv, as scripts/run.sh does: the system Python lacks BenchRig's
# dependencies. Once only: the variable stops a loop if that Python cannot import them either.
if (VENV / "bin" / "python").exists() and Path(sys.prefix).resolve() != VENV.resolve() \
        and not os.environ.get("BENCHRIG_REEXEC"):
    os.environ["BENCHRIG_REEXEC"] = "1"
    os.execv(VENV / "bin" / "python", [str(VENV / "bin" / "python"), __file__, *sys.argv[1:]])

sys.path.insert(0, str(ROOT))

from benchrig.cli import main  # noqa: E402

if __name__ == "__main__":
    main(["summary", *sys.argv[1:]])
