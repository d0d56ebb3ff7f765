"""`benchrig summary`'s filters, its rows per settings, the changed-task warning, `--by task`,
`--format json` and `--format csv --per-attempt`, through the real CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from benchrig.report import render
from benchrig.report.grouping import grouped
from benchrig.report.select import Filters, parse_since, selected
from tests.conftest import cli_call
from tests.helpers.result_sets import attempt, task_hash, write

TASKS = ("t1", "t2", "t3")


def _two_models(folder: Path) -> Path:
    results = [attempt("alpha", t, "pass", run) for t in TASKS for run in range(2)]
    results += [attempt("beta", t, "pass" if t == "t1" else "fail", run, agent="ollama",
                        started="2026-11-29T10:00:00Z") for t in TASKS for run in range(2)]
    results.append(attempt("beta", "c1", "pass", suite="coding", agent="ollama",
                           started="2026-11-29T10:00:00Z"))
    return write(folder, results)


@pytest.mark.slow  # six CLI processes
def test_filters_keep_only_what_is_asked(tmp_path: Path) -> None:
    folder = _two_models(tmp_path / "r")
    for args, rows in [(["-m", "alpha"], ["alpha"]), (["--driver", "ollama"], ["beta"]),
                       (["--since", "2026-11-30"], ["alpha"]),
                       (["--suite", "coding"], ["beta"])]:
        ran = cli_call("summary", str(folder), "--table-only", "--format", "csv", *args,
                       results_dir=tmp_path)
        assert ran.code == 0, ran.stderr
        assert [r["model"] for r in csv.DictReader(io.StringIO(ran.stdout))] == rows, args
    ran = cli_call("summary", str(folder), "-m", "gamma", results_dir=tmp_path)
    assert ran.code == 1 and "none of the 13 results matches the filters" in ran.stderr
    ran = cli_call("summary", str(folder), "--since", "yesterday", results_dir=tmp_path)
    assert ran.code == 2 and "--since 'yesterday' is not a date" in ran.stderr


def test_since_takes_a_time_and_a_zone() -> None:
    results = [attempt("m", "t", "pass", started="2026-11-30T10:00:00Z"),
               attempt("m", "t", "pass", run=1, started="2026-11-30T12:00:00Z")]
    kept = selected(results, Filters(since=parse_since("2026-11-30T12:30+01:00")))
    assert [r["started_at"] for r in kept] == ["2026-11-30T12:00:00Z"]


def test_a_label_filters_and_keeps_its_own_row() -> None:
    """`label` is written by `run --label`; results without one have none."""
    results = [attempt("m", t, "pass") for t in TASKS]
    results += [{**attempt("m", t, "fail", run=1), "label": "nightly"} for t in TASKS]
    assert len(selected(results, Filters(labels=("nightly",)))) == 3
    rows = grouped(results)
    assert [(g.model, g.variant) for g in rows] == [("m", "label nightly"), ("m", "label —")]


def test_results_of_other_settings_are_never_one_row(tmp_path: Path) -> None:
    """Temperature 0 and 0.7 of one model and agent are two rows, each named by the setting
    that sets it apart; one setting alone adds nothing to the name."""
    results = [attempt("m", t, "pass", temperature=0) for t in TASKS]
    results += [attempt("m", t, "fail", run=1, temperature=0.7) for t in TASKS]
    results += [attempt("solo", t, "pass") for t in TASKS]
    ran = cli_call("summary", str(write(tmp_path / "r", results)), "--table-only",
                   results_dir=tmp_path)
    lines = ran.stdout.splitlines()
    assert lines[2].startswith("m [temperature 0]") and "100% (3/3)" in lines[2]
    assert lines[3].startswith("m [temperature 0.7]") and "0% (0/3)" in lines[3]
    assert lines[4].startswith("solo ") and "[" not in lines[4].split()[0]


def test_settings_a_task_or_suite_sets_for_itself_do_not_split_a_model() -> None:
    """A speed task's own max tokens and a suite's think default differ between tasks, not
    between experiments: one row. The same task at two temperatures: two rows."""
    results = [attempt("m", "t1", "pass", max_tokens=1024, think=None),
               attempt("m", "t2", "pass", max_tokens=1024, think=None),
               attempt("m", "fast", "pass", suite="speed", max_tokens=512, think=False)]
    assert [g.name for g in grouped(results)] == ["m"]
    results.append(attempt("m", "t1", "fail", run=1, max_tokens=1024, think=None,
                           temperature=0.7))
    assert [g.name for g in grouped(results)] == ["m [temperature 0]", "m [temperature 0.7]"]


def test_a_changed_task_is_said_with_its_count(tmp_path: Path) -> None:
    """Results of an edited task (another task_hash) are pooled in a row: never silently."""
    results = [attempt("m", "t1", "pass"), attempt("m", "t2", "pass"),
               attempt("m", "t1", "fail", run=1, task_hash=task_hash("t1 edited"))]
    ran = cli_call("summary", str(write(tmp_path / "r", results)), results_dir=tmp_path)
    assert ran.code == 0
    assert "1 task changed between these results (more than one task_hash): t1 (2 versions)" \
        in " ".join(ran.stderr.split())
    ran = cli_call("summary", str(tmp_path / "r"), "-f", "json", results_dir=tmp_path)
    assert json.loads(ran.stdout)["changed_tasks"] == {"t1": 2}


def test_by_task_shows_pass_counts_per_model(tmp_path: Path) -> None:
    folder = _two_models(tmp_path / "r")
    ran = cli_call("summary", str(folder), "--by", "task", results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    rows = {line.split()[1]: line.split()[2:] for line in ran.stdout.splitlines()[2:]
            if line.startswith(("reasoning", "coding"))}
    assert rows["t1"] == ["2/2", "2/2"]  # the same: no ≠
    assert rows["t2"] == ["≠", "2/2", "0/2"]
    assert rows["c1"] == ["—", "1/1"]
    assert ran.stdout.splitlines()[0].split()[2:] == ["alpha", "·", "llamacpp", "beta", "·",
                                                       "ollama"]


def test_by_task_as_json_and_csv() -> None:
    results = [attempt("alpha", "t1", "pass"), attempt("alpha", "t1", "fail", run=1),
               attempt("beta", "t2", "error")]
    data = json.loads(render(results, "json", by="task"))
    assert data["columns"] == ["alpha · llamacpp", "beta · llamacpp"]
    assert data["tasks"][0] == {"suite": "reasoning", "task": "t1", "cells": [
        {"passed": 1, "scored": 2, "attempts": 2}, None]}
    assert data["tasks"][1]["cells"][1] == {"passed": 0, "scored": 0, "attempts": 1}
    rows = list(csv.DictReader(io.StringIO(render(results, "csv", by="task"))))
    assert [(r["task"], r["row"], r["passed"], r["scored"]) for r in rows] == [
        ("t1", "alpha · llamacpp", "1", "2"), ("t2", "beta · llamacpp", "0", "0")]


def test_json_has_n_intervals_and_methods(tmp_path: Path) -> None:
    folder = _two_models(tmp_path / "r")
    ran = cli_call("summary", str(folder), "--format", "json", results_dir=tmp_path)
    data = json.loads(ran.stdout)
    alpha, beta = data["models"]
    assert (alpha["model"], alpha["passed"], alpha["attempts"]) == ("alpha", 6, 6)
    rate = beta["suites"]["reasoning"]["pass_rate"]
    assert (rate["value"], rate["n_tasks"]) == (2 / 6, 3)
    assert rate["low"] < 2 / 6 < rate["high"] and "cluster-robust" in rate["method"]
    single = beta["suites"]["coding"]["pass_rate"]
    assert single["method"].startswith("Wilson") and single["n_tasks"] == 1
    assert set(data["methods"]) >= {"pass_rate", "pass_rate_interval"}
    assert [t["task"] for t in data["tasks"]] == ["c1", "t1", "t2", "t3"]


def test_csv_per_attempt_is_one_row_per_result(tmp_path: Path) -> None:
    results = [attempt("=HYPERLINK(\"http://x\")", "t1", "pass"), attempt("m", "t2", "error")]
    ran = cli_call("summary", str(write(tmp_path / "r", results)), "--format", "csv",
                   "--per-attempt", results_dir=tmp_path)
    rows = list(csv.DictReader(io.StringIO(ran.stdout)))
    assert len(rows) == 2
    by_task = {r["task"]: r for r in rows}
    assert by_task["t1"]["model"].startswith("'=")  # never a formula in a spreadsheet
    assert (by_task["t2"]["result"], by_task["t2"]["error_kind"],
            by_task["t2"]["counted"]) == ("error", "infra", "false")
    assert by_task["t1"]["ttft_ms"] == "100.0" and by_task["t1"]["temperature"] == "0"
    ran = cli_call("summary", str(tmp_path / "r"), "--per-attempt", results_dir=tmp_path)
    assert ran.code == 2 and "use it with --format csv" in ran.stderr


def test_plain_summary_is_unchanged_by_the_new_views() -> None:
    results = [attempt("m", t, "pass") for t in TASKS]
    assert render(results, "table") == render(results, "table", by="model")
