"""`benchrig compare A B`: pairs by task, states its method and n, and says plainly whether a
difference is significant; through the real CLI where it matters."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import UsageError
from benchrig.report.compare import compare, render_text
from benchrig.report.stats import BOOTSTRAP, MCNEMAR
from tests.conftest import cli_call
from tests.helpers.result_sets import attempt, task_hash, write

TASKS = [f"t{i}" for i in range(12)]


def _side(model: str, passes: set[str], runs: int = 1, **kwargs: Any) -> list[dict[str, Any]]:
    return [attempt(model, t, "pass" if t in passes else "fail", run, **kwargs)
            for t in TASKS for run in range(runs)]


def test_a_clear_difference_over_single_runs(tmp_path: Path) -> None:
    """A passes 10 of 12 tasks, B the 2 others: exact McNemar, p = 2·C(12,≤2)/2¹²."""
    folder = write(tmp_path / "r", _side("a", set(TASKS[:10])) + _side("b", set(TASKS[10:])))
    ran = cli_call("compare", "a", "b", str(folder), results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    line = next(x for x in ran.stdout.splitlines() if x.startswith("  reasoning:"))
    assert "A 83.3% vs B 16.7%; A − B +66.7 points" in line
    assert "→ A better" in line and "exact McNemar" in line and "n=12 tasks" in line
    assert "p=0.0386" in line  # 2 · 79/4096
    data = json.loads(cli_call("compare", "a", "b", str(folder), "-f", "json",
                               results_dir=tmp_path).stdout)
    (row,) = data["suites"]
    assert row["significant"] is True and row["difference"]["n_tasks"] == 12
    assert row["difference"]["p_value"] == pytest.approx(2 * 79 / 4096)


def test_identical_sides_are_not_significant(tmp_path: Path) -> None:
    passes = set(random.Random(3).sample(TASKS, 7))
    folder = write(tmp_path / "r", _side("a", passes, runs=3) + _side("b", passes, runs=3))
    ran = cli_call("compare", "a", "b", str(folder), results_dir=tmp_path)
    line = next(x for x in ran.stdout.splitlines() if x.startswith("  reasoning:"))
    assert "A − B +0.0 points [+0.0, +0.0] → not significant" in line
    assert BOOTSTRAP in line and "seed" in line
    assert "TTFT A ÷ B: 1.00× [1.00, 1.00] → not significant" in ran.stdout


def test_speed_ratios_and_their_direction() -> None:
    a = _side("a", set(TASKS), ttft_ms=200.0, tokens_per_s=20.0)
    b = _side("b", set(TASKS), ttft_ms=100.0, tokens_per_s=40.0)
    (row,) = compare(a + b, "a", "b").rows
    assert row.ttft_ratio is not None and row.ttft_ratio.value == 2.0
    assert row.decode_ratio is not None and row.decode_ratio.value == 0.5
    text = render_text(compare(a + b, "a", "b"))
    assert "TTFT A ÷ B: 2.00× [2.00, 2.00] → B faster" in text
    assert "decode A ÷ B: 0.50× [0.50, 0.50] → B faster" in text


def test_pass_at_k_for_coding_for_the_ks_the_runs_allow() -> None:
    a = _side("a", set(TASKS[:6]), runs=3, suite="coding")
    b = _side("b", set(TASKS[:3]), runs=3, suite="coding")
    (row,) = compare(a + b, "a", "b").rows
    assert set(row.pass_at_k[0]) == {1, 2, 3}
    assert row.pass_at_k[0][1] == pytest.approx(0.5)
    assert row.pass_at_k[1][3] == pytest.approx(0.25)
    assert "pass@3 A 50.0% B 25.0%" in render_text(compare(a + b, "a", "b"))


def test_sides_by_agent_or_label_and_overlaps_refused() -> None:
    results = _side("m", set(TASKS[:4])) + _side("m", set(TASKS[:8]), agent="ollama")
    found = compare(results, "m@llamacpp", "m@ollama")
    assert (found.a.attempts, found.b.attempts) == (12, 12)
    with pytest.raises(UsageError, match="match both"):
        compare(results, "m", "m@ollama")
    with pytest.raises(UsageError, match="no result matches 'x'"):
        compare(results, "x", "m")
    labelled = [{**r, "label": "new"} for r in _side("m", set(TASKS), runs=1)]
    assert compare(labelled + _side("n", set()), "new", "n").rows[0].rate_a == 1.0


def test_tasks_of_another_file_version_are_counted_and_said() -> None:
    a = _side("a", set(TASKS))
    b = [{**r, "task_hash": task_hash("edited")} if r["task"] == "t0" else r
         for r in _side("b", set())]
    text = render_text(compare(a + b, "a", "b"))
    assert "1 paired tasks were run from different task files" in text


def test_method_is_mcnemar_only_for_single_runs() -> None:
    (single,) = compare(_side("a", {"t1"}) + _side("b", set()), "a", "b").rows
    (more,) = compare(_side("a", {"t1"}, runs=2) + _side("b", set(), runs=2), "a", "b").rows
    assert single.difference is not None and single.difference.method == MCNEMAR
    assert more.difference is not None and more.difference.method == BOOTSTRAP


def test_a_side_pooling_drivers_is_refused_by_name(tmp_path: Path) -> None:
    """`smollm2` ran on two drivers: pooling them would compare a mixture; exit 2, saying how
    to choose."""
    pooled = _side("smollm2", set(TASKS)) + _side("smollm2", set(), agent="openai",
                                                  started="2026-11-30T11:00:00Z")
    folder = write(tmp_path / "r", pooled + _side("b", set(TASKS[:3])))
    ran = cli_call("compare", "smollm2", "b", str(folder), results_dir=tmp_path)
    assert ran.code == 2, ran.stdout
    assert ("A=smollm2 pools drivers llamacpp and openai: say smollm2@llamacpp or "
            "smollm2@openai, or a label") in ran.stderr
    assert compare(pooled + _side("b", set()), "smollm2@openai", "b").a.attempts == 12


def test_a_label_pooling_models_or_a_model_pooling_labels_is_refused() -> None:
    two_models = [{**r, "label": "new"} for r in _side("m", set(TASKS)) + _side("n", set())]
    with pytest.raises(UsageError, match="A=new pools models m and n: name one model"):
        compare(two_models + _side("b", set()), "new", "b")
    two_labels = [{**r, "label": "x"} for r in _side("b", set())] + _side("b", set(TASKS))
    with pytest.raises(UsageError, match=r"B=b pools labels \(none\) and x"):
        compare(_side("a", set()) + two_labels, "a", "b")


def test_sides_sharing_no_task_exit_2(tmp_path: Path) -> None:
    other = [attempt("b", f"u{i}", "pass") for i in range(3)]
    folder = write(tmp_path / "r", _side("a", set(TASKS)) + other)
    ran = cli_call("compare", "a", "b", str(folder), results_dir=tmp_path)
    assert ran.code == 2 and "A=a (12 tasks) and B=b (3 tasks) share no task" in ran.stderr
