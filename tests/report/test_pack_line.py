"""An imported pack's tasks (HumanEval, MBPP) are their pack's own scorecard line, scored by
pass@k over its problems: never folded into the bundled coding score or the composite."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli_call
from tests.helpers.result_sets import attempt, write


def _pack_and_results(tmp_path: Path) -> tuple[Path, Path]:
    tasks = tmp_path / "tasks"
    (tasks / "humaneval").mkdir(parents=True)
    (tasks / "humaneval" / "pack.json").write_text(json.dumps(
        {"name": "humaneval", "problems": 2,
         "task_ids": {"humaneval-000": "HumanEval/0", "humaneval-001": "HumanEval/1"}}),
        encoding="utf-8")
    # the bundled coding task passes; the pack's problems mostly fail: folded in, they
    # would pull the coding score and the composite from 100% down to 40%
    results = [attempt("alpha", "lru-cache", "pass", suite="coding"),
               *(attempt("alpha", "humaneval-000", "fail", run=k, suite="coding")
                 for k in range(2)),
               attempt("alpha", "humaneval-001", "pass", run=0, suite="coding"),
               attempt("alpha", "humaneval-001", "fail", run=1, suite="coding")]
    return tasks, write(tmp_path / "r", results)


def test_a_pack_is_its_own_line_out_of_coding_and_the_composite(tmp_path: Path) -> None:
    tasks, folder = _pack_and_results(tmp_path)
    env = {"BENCHRIG_TASKS_DIR": str(tasks)}
    ran = cli_call("summary", str(folder), "--format", "json", results_dir=tmp_path, env=env)
    assert ran.code == 0, ran.stderr
    model = json.loads(ran.stdout)["models"][0]
    coding, pack = model["suites"]["coding"], model["suites"]["humaneval"]
    assert (coding["attempts"], coding["passed"], coding["score"]) == (1, 1, 1.0)
    assert pack["score"] is None and pack["pack"]["problems"] == 2
    assert pack["pack"]["pass_at"] == {"1": 0.25, "2": 0.5}
    assert model["composite"] == {**model["composite"], "value": 1.0, "suites": ["coding"]}
    text = cli_call("summary", str(folder), results_dir=tmp_path, env=env).stdout
    line = next(x for x in text.splitlines() if x.strip().startswith("humaneval "))
    assert "pass@1 25" in line and "not in the composite" in line
