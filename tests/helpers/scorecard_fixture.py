"""A fixed, schema-valid set of result files for the scorecard tests and the golden report.

Synthetic on purpose (the figures are chosen, not measured): two models, every suite,
three sampled runs (temperature 0.7, a seed each) of one of them, a truncated answer, a
response cut off while thinking, an error, and a decode rate computed over the 0.001 s
floor.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

from benchrig.resultio.files import result_path, validate
from tests.conftest import ROOT

EXAMPLE = json.loads((ROOT / "tests" / "fixtures" / "result-template.json").read_text())
CODING = {"flatten-dict": 4, "merge-intervals": 5, "valid-brackets": 6, "lru-cache": 2}
REASONING = ["bat-and-ball", "chained-percentages", "discount-tax", "distinct-digit-fives",
             "knights-knaves", "letter-count-berries", "letters-in-strawberry",
             "linear-recurrence", "mislabeled-boxes", "multiples-three-five",
             "set-probability", "two-trains"]
POLISH = {"polish-declension": 7, "polish-idioms": 5, "polish-summary": 5}
SPEED = ["speed-short-decode", "speed-sustained-512"]
START = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)


def _stamp(seconds: int) -> str:
    return (START + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Builder:
    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []

    def add(self, model: str, agent: str, suite: str, task: str, run: int, outcome: str, *,
            checks: tuple[int, int] = (0, 0), truncated: bool = False,
            cut_thinking: bool = False, ttft_ms: float | None = 500.0,
            tps: float | None = 50.0, floored: bool = False, prefill: float | None = 200.0,
            output_tokens: int = 100, thinking_tokens: int = 0,
            finish: str | None = "stop") -> None:
        r = copy.deepcopy(EXAMPLE)
        n = len(self.results)
        r.update(task=task, model=model, agent=agent, driver=agent, suite=suite,
                 started_at=_stamp(run * 10_000 + n), ended_at=_stamp(run * 10_000 + n + 1),
                 run_id=f"{n:012x}", result=outcome, pass_at_1=outcome == "pass",
                 notes=f"fixture: {outcome}", truncated=truncated,
                 truncated_thinking=cut_thinking, finish_reason=finish, answer_excerpt="",
                 evidence={}, isolation=None, code_source=None, sandbox_error=None,
                 error={"kind": "infra", "message": "server down"} if outcome == "error"
                 else None)
        # sampled runs, each with its own seed (as `--runs` sends them)
        r["settings"] = {**r["settings"], "temperature": 0.7, "seed": run}
        passed, total = checks
        r["checks"] = {"passed": passed, "total": total,
                       "details": [{"name": f"check {i}", "passed": i < passed, "message": ""}
                                   for i in range(total)]}
        r["metrics"].update(ttft_ms=ttft_ms, tokens_per_s=tps, tokens_per_s_floored=floored,
                            prefill_tokens_per_s=prefill, output_tokens=output_tokens,
                            thinking_tokens=thinking_tokens, thinking_tokens_source="counted",
                            wall_s=2.0)
        r.pop("transcript_file", None)
        validate(r)
        self.results.append(r)


def build() -> list[dict[str, Any]]:
    b = Builder()
    # alpha: three runs of everything.
    reasoning_passes = [3, 7, 5]  # per run → 41.7% [25.0-58.3]
    coding_failed_check = {2: "valid-brackets"}  # run 3 misses one check → 98.0% [94.1-100]
    for run in range(3):
        for i, task in enumerate(REASONING):
            ok = i < reasoning_passes[run]
            cut = run == 1 and task == "two-trains"
            thought = run == 2 and task == "knights-knaves"
            b.add("alpha", "llamacpp", "reasoning", task, run, "pass" if ok else "fail",
                  checks=(int(ok), 1), truncated=cut or thought, cut_thinking=thought,
                  finish="length" if cut or thought else "stop", ttft_ms=400.0 + 10 * i,
                  output_tokens=200, thinking_tokens=150 if thought else 50)
        for task, total in CODING.items():
            passed = total - (coding_failed_check.get(run) == task)
            b.add("alpha", "llamacpp", "coding", task, run,
                  "pass" if passed == total else "fail", checks=(passed, total),
                  ttft_ms=900.0, output_tokens=300)
        for j, (task, total) in enumerate(POLISH.items()):
            passed = total if j == run else total - 2
            b.add("alpha", "llamacpp", "polish", task, run,
                  "pass" if passed == total else "fail", checks=(passed, total), ttft_ms=700.0)
        for k, task in enumerate(SPEED):
            b.add("alpha", "llamacpp", "speed", task, run, "no-test", ttft_ms=100.0 + run,
                  tps=60.0 + run + 10 * k, prefill=180.0 + run, output_tokens=128 + 384 * k,
                  finish="length")
    # beta: one run, an error, a floored decode rate, no coding.
    for i, task in enumerate(REASONING):
        outcome = "error" if task == "two-trains" else ("pass" if i % 2 == 0 else "fail")
        b.add("beta", "openai", "reasoning", task, 0, outcome,
              checks=(0, 0) if outcome == "error" else (int(outcome == "pass"), 1),
              ttft_ms=None if outcome == "error" else 250.0,
              tps=None if outcome == "error" else 30.0)
    b.add("beta", "openai", "speed", "speed-short-decode", 0, "no-test", ttft_ms=5.0,
          tps=3000.0, floored=True, prefill=None, output_tokens=3, finish="stop")
    b.add("beta", "openai", "speed", "speed-sustained-512", 0, "no-test", ttft_ms=40.0,
          tps=45.5, prefill=None, output_tokens=512, finish="length")
    return b.results


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for result in build():
        path = result_path(folder, result)
        path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
