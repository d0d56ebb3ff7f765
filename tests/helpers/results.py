"""A result file for the summary tests: the published example with the figures a test sets."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from benchrig.resultio.files import validate
from tests.conftest import ROOT

EXAMPLE = json.loads((ROOT / "tests" / "fixtures" / "result-template.json").read_text())


def result(model: str, outcome: str, tps: float | None, ttft: float | None,
           cost: float | None = None, floored: bool = False,
           kind: str = "infra") -> dict[str, Any]:
    r = copy.deepcopy(EXAMPLE)
    r.update(model=model, result=outcome, pass_at_1=outcome == "pass", agent="llamacpp",
             error={"kind": kind, "message": "x"} if outcome == "error" else None)
    r["metrics"].update(tokens_per_s=tps, ttft_ms=ttft, wall_s=2.0, cost_usd=cost,
                        tokens_per_s_floored=floored)
    return r


def valid_results(folder: Path) -> list[dict[str, Any]]:
    """Every result file in `folder`, in name order, each validated against the schema."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        validate(data)
        found.append(data)
    return found
