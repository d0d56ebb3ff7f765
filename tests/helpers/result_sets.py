"""Sets of result files for the summary, compare and report tests: one valid result per
attempt, written as BenchRig writes them."""

from __future__ import annotations

import copy
import hashlib
import random
from pathlib import Path
from typing import Any

from benchrig.resultio.files import result_path, result_text, validate
from tests.helpers.results import EXAMPLE


def task_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def attempt(model: str, task: str, outcome: str, run: int = 0, suite: str = "reasoning",
            agent: str = "llamacpp", ttft_ms: float | None = 100.0,
            tokens_per_s: float | None = 50.0, started: str = "2026-11-30T10:00:00Z",
            **changes: Any) -> dict[str, Any]:
    """One attempt's result: pass, fail or error (infra) of `model` on `task`."""
    r = copy.deepcopy(EXAMPLE)
    r.update(model=model, task=task, suite=suite, agent=agent, driver=agent, result=outcome,
             pass_at_1=outcome == "pass", run_index=run, started_at=started,
             run_id=f"{random.Random(f'{model}{task}{run}{started}').getrandbits(48):012x}",
             task_hash=task_hash(task), truncated=False, finish_reason="stop",
             error={"kind": "infra", "message": "x"} if outcome == "error" else None,
             answer_excerpt="Final answer: 5", notes="")
    r["checks"] = {"passed": int(outcome == "pass"), "total": 1, "details": [
        {"name": "answer", "passed": outcome == "pass", "message": "", "duration_s": 0.0}]}
    r["metrics"].update(ttft_ms=ttft_ms, answer_ttft_ms=ttft_ms, tokens_per_s=tokens_per_s)
    for key, value in changes.items():
        if key in ("temperature", "max_tokens", "context_size", "think"):
            r["settings"][key] = r["settings"][f"{key}_requested"] = value
        else:
            r[key] = value
    return r


def write(folder: Path, results: list[dict[str, Any]]) -> Path:
    """Each result validated and written into `folder` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    for r in results:
        validate(r)
        result_path(folder, r).write_text(result_text(r), encoding="utf-8")
    return folder
