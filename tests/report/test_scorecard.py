"""Scorecards: runs, intervals, coding levels, composite, flags — and the rendered report of a
fixed set of result files, pinned in golden files."""

from __future__ import annotations

import copy
import csv
import io
import os
import sys
from pathlib import Path

import pytest

from benchrig.report import render
from benchrig.report.grouping import grouped
from benchrig.report.scorecard import by_run, scorecards
from benchrig.resultio.record import as_records
from tests.conftest import ROOT, benchrig, cli_call
from tests.helpers import scorecard_fixture

GOLDEN = ROOT / "tests" / "fixtures" / "golden"
RESULTS = scorecard_fixture.build()


def cards() -> dict[str, dict[str, object]]:
    return {c.model: {"card": c, **c.suites} for c in scorecards(grouped(RESULTS))}


def test_attempts_group_into_runs_by_start_time() -> None:
    alpha = [r for r in RESULTS if r["model"] == "alpha" and r["suite"] == "reasoning"]
    runs = by_run(as_records(reversed(alpha)))  # file order does not matter, start time does
    assert [len(run) for run in runs] == [12, 12, 12]
    assert [sum(r["result"] == "pass" for r in run) for run in runs] == [3, 7, 5]


def test_reasoning_rate_and_its_range_over_the_runs() -> None:
    (alpha, beta) = scorecards(grouped(RESULTS))
    card = alpha.suites["reasoning"]
    assert (card.passed, card.scored, card.runs) == (15, 36, 3)
    assert card.rate == pytest.approx(15 / 36)
    assert card.rate_span is not None
    assert (card.rate_span.low, card.rate_span.high) == (3 / 12, 7 / 12)
    assert (card.truncated, card.truncated_thinking) == (2, 1)
    assert card.thinking_share == pytest.approx((35 * 50 + 150) / (36 * 200))
    b = beta.suites["reasoning"]
    assert (b.passed, b.scored, b.errors) == (6, 11, 1)  # an infra error: beside, not in
    assert b.rate_span is not None and b.rate_span.runs == 1


def test_coding_task_and_assertion_levels() -> None:
    (alpha, _) = scorecards(grouped(RESULTS))
    card = alpha.suites["coding"]
    assert (card.passed, card.scored) == (11, 12)  # a task passes only with every check
    assert (card.checks_passed, card.checks_total) == (50, 51)
    assert card.checks_span is not None
    assert (card.checks_span.low, card.checks_span.high) == (16 / 17, 1.0)
    assert card.score == card.checks_rate  # the composite takes the assertion level


def test_composite_is_the_mean_of_the_answer_scored_suites() -> None:
    (alpha, beta) = scorecards(grouped(RESULTS))
    suites = alpha.suites
    assert alpha.composite_suites == ("coding", "reasoning", "polish")
    assert alpha.composite == pytest.approx(
        (50 / 51 + 15 / 36 + suites["polish"].passed / 9) / 3)
    assert suites["speed"].score is None  # speed is measured, not scored
    assert beta.composite == pytest.approx(6 / 11)
    assert alpha.composite_span is not None and alpha.composite_span.runs == 3


def _coding_attempt(outcome: str, kind: str | None, checks: tuple[int, int]) -> dict[str, object]:
    (base,) = [r for r in RESULTS if r["model"] == "alpha" and r["suite"] == "coding"][:1]
    r = copy.deepcopy(base)
    passed, total = checks
    r.update(model="gamma", result=outcome, pass_at_1=outcome == "pass",
             run_id=f"{len(outcome)}{passed}{total}{kind or ''}"[:12],
             error={"kind": kind, "message": "x"} if kind else None,
             checks={"passed": passed, "total": total,
                     "details": [{"name": f"c{i}", "passed": i < passed, "message": ""}
                                 for i in range(total)]})
    return r


def test_infra_errors_stay_out_of_coding_levels_and_composite_timeouts_do_not() -> None:
    """A coding pass beside an infra error (server down, checks empty) is 100 % at both
    levels and in the composite; a timeout (every assertion failed) still lowers them."""
    down = [_coding_attempt("pass", None, (4, 4)), _coding_attempt("error", "infra", (0, 0))]
    (card,) = scorecards(grouped(down))
    coding = card.suites["coding"]
    assert (coding.passed, coding.scored, coding.errors) == (1, 1, 1)
    assert (coding.checks_passed, coding.checks_total) == (4, 4)
    assert card.composite == 1.0
    assert "1 error" in render(down, "table")
    slow = [_coding_attempt("pass", None, (4, 4)), _coding_attempt("error", "timeout", (0, 4))]
    (card,) = scorecards(grouped(slow))
    coding = card.suites["coding"]
    assert (coding.passed, coding.scored, coding.errors) == (1, 2, 0)
    assert (coding.checks_passed, coding.checks_total) == (4, 8)
    assert card.composite == 0.5


def test_speed_figures_and_the_floor_flag() -> None:
    (alpha, beta) = scorecards(grouped(RESULTS))
    speed = alpha.suites["speed"]
    assert speed.decode_tps == pytest.approx(66.0) and not speed.decode_floored
    assert speed.prefill_tps == pytest.approx(181.0)
    assert speed.finish_reasons == {"length": 6}
    assert speed.truncated == 0  # stopping at the limit is not truncation here
    assert beta.suites["speed"].decode_floored


def test_avg_ttft_per_suite_and_overall() -> None:
    (alpha, _) = scorecards(grouped(RESULTS))
    assert alpha.suites["coding"].avg_ttft_s == pytest.approx(0.9)
    assert alpha.suites["speed"].avg_ttft_s == pytest.approx(0.101)
    times = [r["metrics"]["ttft_ms"] / 1000 for r in RESULTS if r["model"] == "alpha"]
    assert alpha.avg_ttft_s == pytest.approx(sum(times) / len(times))


def test_text_report_shows_intervals_levels_and_flags() -> None:
    text = render(RESULTS, "table")
    assert text.startswith("model ")  # the benchmark-runner's per-model table comes first
    assert "reasoning  41.7% [25.0-58.3] (15/36)" in text
    assert "Tasks Passed: 11/12 (91.7%)" in text
    assert "Assertions: 50/51 (98.0%) [94.1-100.0]" in text
    assert "⚠ 2 truncated" in text and "1 cut off while thinking" in text
    assert "decode ~3000.0 t/s" in text
    assert "min-max over up to 3 runs" in text
    assert "1 error" in text


def test_csv_has_the_documented_columns() -> None:
    rows = list(csv.DictReader(io.StringIO(render(RESULTS, "csv"))))
    alpha, beta = rows
    for column in ("coding_task_pass_rate", "coding_tasks_passed", "coding_task_count",
                   "coding_assertions_passed", "coding_assertion_count", "coding_pass_rate",
                   "eval_tok_sec_floored", "avg_ttft_sec", "truncated_runs", "composite_score"):
        assert column in alpha, column
    assert (alpha["coding_tasks_passed"], alpha["coding_task_count"]) == ("11", "12")
    assert (alpha["coding_assertions_passed"], alpha["coding_assertion_count"]) == ("50", "51")
    assert alpha["reasoning_pass_rate_min"] == "0.2500"
    assert beta["coding_pass_rate"] == ""  # beta ran no coding: empty, not 0
    assert beta["speed_eval_tok_sec_floored"] == "true"
    assert alpha["speed_eval_tok_sec_floored"] == "false"


def test_markdown_report_has_a_section_per_model_and_task_rows() -> None:
    md = render(RESULTS, "markdown")
    assert "## Scorecards" in md and "### alpha · llamacpp" in md
    assert "| coding | 98.0% [94.1-100.0] | 3 | Tasks Passed: 11/12 (91.7%)" in md
    assert "| reasoning | two-trains | 3 | 0/3 | 0/3 | ⚠ 1 |" in md


def test_task_rows_count_only_their_own_model_when_two_names_show_alike() -> None:
    # Two models whose names differ past the shown length: one card each, and each card's
    # task rows count that model's attempts, not the other's too.
    alike = [copy.deepcopy(r) for r in RESULTS if r["model"] == "alpha"
             and r["task"] == "bat-and-ball"]
    for index, r in enumerate(alike):
        r["model"] = "m" * 300 + ("a" if index else "b")
    md = render(alike, "markdown")
    rows = [line for line in md.splitlines() if line.startswith("| reasoning | bat-and-ball")]
    assert len(alike) == 3  # "…a" sorts first: two attempts, then "…b": one
    assert [line.split(" | ")[2] for line in rows] == ["2", "1"]


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "name"), [("table", "summary.txt"),
                                           ("markdown", "summary.md"), ("csv", "summary.csv")])
def test_rendered_summary_of_the_fixed_results_is_pinned(tmp_path: Path, fmt: str,
                                                         name: str) -> None:
    folder = tmp_path / "results"
    scorecard_fixture.write(folder)
    ran = benchrig("--format", fmt, str(folder), results_dir=folder,
                   command=[sys.executable, str(ROOT / "scripts" / "summary.py")])
    assert ran.code == 0, ran.stderr
    assert ran.stderr == ""  # every fixture file validates
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(ran.stdout, encoding="utf-8")
    assert ran.stdout == golden.read_text(encoding="utf-8")


def test_table_only_keeps_the_benchmark_runner_table(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    scorecard_fixture.write(folder)
    ran = cli_call("summary", "--table-only", str(folder), results_dir=folder)
    assert ran.code == 0
    assert ran.stdout.splitlines()[0].split()[:3] == ["model", "agent", "attempts"]
    lines = ran.stdout.splitlines()
    assert "Scorecards" not in ran.stdout and len(lines) == 5
    assert lines[4].startswith("Pass rate = passed ÷ attempts that reached a verdict")


def test_runs_by_run_index_are_the_order_run_order_gives() -> None:
    """A task whose results all carry their run index is sorted by it directly: the same runs
    as attempts.run_order, ties on the index broken by start time and run id, and a task with
    one unnumbered result still ordered by run_order."""
    from benchrig.attempts import run_order, unit
    from tests.helpers.result_sets import attempt

    given = [attempt("alpha", task, outcome, run=run, started=f"2026-11-30T1{hour}:00:00Z")
             for task, run, hour, outcome in [
                 ("t1", 2, 1, "pass"), ("t1", 0, 5, "fail"), ("t1", 1, 0, "error"),
                 ("t1", 1, 3, "pass"), ("t2", 0, 2, "pass"), ("t2", 0, 1, "fail"),
                 ("t3", 1, 0, "pass"), ("t3", 0, 4, "fail")]]
    given[-1].pop("run_index")  # t3: one result without its index
    # t4: two results tied on index and start time, their run ids in reverse file order
    for run_id, outcome in [("ffffffffffff", "pass"), ("000000000000", "fail")]:
        tied = attempt("alpha", "t4", outcome, run=0, started="2026-11-30T12:00:00Z")
        tied["run_id"] = run_id
        given.append(tied)
    records = as_records(given)
    per_task: dict[str, list[object]] = {}
    for r in records:
        per_task.setdefault(unit(r), [])
    expected: list[list[object]] = []
    for task in per_task:
        for k, r in enumerate(run_order([r for r in records if unit(r) == task])):
            if k == len(expected):
                expected.append([])
            expected[k].append(r)
    assert by_run(records) == expected
    assert [[r.run_index for r in run] for run in by_run(records)] == \
        [[0, 0, None, 0], [1, 0, 1, 0], [1], [2]]
    assert [r.run_id for run in by_run(records) for r in run if r.task == "t4"] == \
        ["000000000000", "ffffffffffff"]


def test_finish_reasons_are_counted_as_shown() -> None:
    """Each distinct reason is made printable once: the counts are those of every result's
    reason made printable (reasons that print alike are one count), a control character
    shown, never obeyed, and none is no reason."""
    from collections import Counter

    from benchrig.report.scorecard import _finishes
    from benchrig.textsafe import label
    from tests.helpers.result_sets import attempt

    reasons = ["stop", "length", "stop", None, "evil\x1b[2J", "evil\x1b[2J", "x" * 300,
               "x" * 301]
    records = as_records([attempt("alpha", f"t{i}", "pass", finish_reason=reason)
                          for i, reason in enumerate(reasons)])
    found = _finishes(records)
    assert found == dict(sorted(Counter(label(r) for r in reasons if r is not None).items()))
    assert found["stop"] == 2 and found[label("evil\x1b[2J")] == 2
    assert list(found) == sorted(found) and all("\x1b" not in k for k in found)


def test_a_mean_over_records_still_refuses_an_implausible_figure() -> None:
    """mean_figure reads a record's figures as credible; a record made by hand with raw ones
    is judged there all the same (the mean a forged file cannot bend)."""
    from dataclasses import replace

    from benchrig.metrics import mean_metric
    from benchrig.report.grouping import mean_figure
    from tests.helpers.result_sets import attempt

    made = as_records([attempt("alpha", "t1", "pass", tokens_per_s=40.0),
                       attempt("alpha", "t2", "pass", tokens_per_s=60.0)])
    forged = replace(made[1], metrics={**made[1].metrics, "tokens_per_s": 9e99})
    assert mean_figure(made, "tokens_per_s") == 50.0
    assert mean_figure([made[0], forged], "tokens_per_s") == 40.0 == \
        mean_metric([made[0].metrics, forged.metrics], "tokens_per_s")
