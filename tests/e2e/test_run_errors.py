"""`benchrig run`: usage errors found before any model is called (one line, exit 2), and
`--retry-errors` running again exactly the attempts whose latest result is an error."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchrig.attempts import without_retried_errors
from benchrig.report.grouping import grouped
from benchrig.report.scorecard import by_run, scorecards
from benchrig.report.table import model_rows
from benchrig.resultio.files import load_results
from benchrig.suites import SUITES
from tests.conftest import ROOT, SOLUTIONS, cli_call, fenced
from tests.helpers.loopback import Loopback, Reply

GOOD = fenced((SOLUTIONS / "lru-cache.py").read_text())


def _one_line_usage_error(ran: Any) -> str:
    assert ran.code == 2, ran.stderr
    assert "Traceback" not in ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, ran.stderr
    return str(lines[0])


def test_an_unknown_suite_is_named_with_the_suites(results_dir: Path) -> None:
    ran = cli_call("run", "--suite", "contxt", "-d", "replay", "-p", "x",
                   results_dir=results_dir)
    line = _one_line_usage_error(ran)
    assert f"contxt is not a suite; suites: {', '.join(SUITES)}" in line


def test_a_results_path_that_is_a_file_stops_before_the_model_is_asked(
        tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    with Loopback({("POST", "/v1/chat/completions"): Reply.json({}, 500)}) as server:
        ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p",
                       f"{server.url}/v1", results_dir=blocker)
        assert server.requests == []  # the model was never called
    assert "is a file, not a folder" in _one_line_usage_error(ran)


def test_a_read_only_results_folder_stops_before_the_model_is_asked(tmp_path: Path) -> None:
    """A real read-only mount (we are root: permission bits would not stop us)."""
    folder = tmp_path / "results"
    folder.mkdir()
    answer = tmp_path / "answer.md"
    answer.write_text(GOOD)
    cli = shlex.join([sys.executable, "-m", "benchrig.cli", "run", "lru-cache", "-m", "m",
                      "-d", "replay", "-p", str(answer), "--results-dir", str(folder)])
    mount = shlex.join(["mount", "--bind", "-o", "ro", str(folder), str(folder)])
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("no mount namespace here")
    ran = subprocess.run(["unshare", "-m", "sh", "-c", f"{mount} && {cli}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 2, ran.stderr
    assert "Traceback" not in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr
    assert f"cannot write results to {folder}" in ran.stderr
    assert list(folder.iterdir()) == []


def _latest(results_dir: Path) -> dict[tuple[str, int], str]:
    latest: dict[tuple[str, int], tuple[str, str]] = {}
    for r in load_results([results_dir]).results:
        key = (r["model"], r["run_index"])
        if key not in latest or r["started_at"] > latest[key][0]:
            latest[key] = (r["started_at"], r["result"])
    return {k: v[1] for k, v in latest.items()}


@pytest.mark.slow
def test_retry_errors_runs_exactly_the_attempts_whose_latest_result_is_an_error(
        tmp_path: Path, results_dir: Path) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(GOOD)

    def run(*args: str) -> Any:
        return cli_call("run", "lru-cache", "-d", "replay", "-p", str(answer), *args,
                        results_dir=results_dir)

    assert run("-m", "a", "--runs", "2").code == 0  # a: runs 0 and 1 pass
    answer.write_bytes(b"\xff\xfe not UTF-8")  # the answer file breaks: an infra error
    assert run("-m", "a", "-m", "b").code == 1  # a run 0 and b run 0 end in error
    assert _latest(results_dir) == {("a", 0): "error", ("a", 1): "pass", ("b", 0): "error"}
    files = len(list(results_dir.glob("*.json")))

    answer.write_text(GOOD)
    ran = run("-m", "a", "-m", "b", "--retry-errors")
    assert ran.code == 0, ran.stderr
    assert "retrying 2 attempts" in ran.stderr
    assert len(list(results_dir.glob("*.json"))) == files + 2
    assert _latest(results_dir) == {("a", 0): "pass", ("a", 1): "pass", ("b", 0): "pass"}

    again = run("-m", "a", "-m", "b", "--retry-errors")
    assert again.code == 0 and "nothing to retry" in again.stderr
    assert len(list(results_dir.glob("*.json"))) == files + 2

    # the replaced errors are not errors still standing (a ran run 0 twice without error)
    (a, b) = model_rows(grouped(load_results([results_dir]).results))
    assert (a.runs, a.passed, a.errors, b.runs, b.passed, b.errors) == (3, 3, 0, 1, 1, 0)


@pytest.mark.slow
def test_retry_errors_numbers_older_results_by_start_time(
        tmp_path: Path, results_dir: Path) -> None:
    """Results written before `run_index` existed are runs 0..k-1 by start time."""
    answer = tmp_path / "answer.md"
    answer.write_bytes(b"\xff")
    cli_call("run", "lru-cache", "-m", "a", "-d", "replay", "-p", str(answer), "--runs", "2",
             results_dir=results_dir)
    paths = list(results_dir.glob("*.json"))
    assert len(paths) == 2
    first = min((json.loads(p.read_text()) for p in paths), key=lambda r: r["started_at"])
    for path in paths:  # as an older BenchRig wrote them; the first one passed
        data = json.loads(path.read_text())
        del data["run_index"]
        if data["run_id"] == first["run_id"]:
            data.update(result="pass", pass_at_1=True, error=None)
        path.write_text(json.dumps(data))
    answer.write_text(GOOD)
    ran = cli_call("run", "lru-cache", "-m", "a", "-d", "replay", "-p", str(answer),
                   "--retry-errors", results_dir=results_dir)
    assert ran.code == 0 and "retrying 1 attempt " in ran.stderr
    retried = [r for r in load_results([results_dir]).results if "run_index" in r]
    assert len(retried) == 1 and retried[0]["result"] == "pass"
    assert retried[0]["run_index"] == 1  # the second by start time was the error


@pytest.mark.slow
def test_a_retried_attempt_takes_the_place_of_its_error_in_its_run(
        tmp_path: Path, results_dir: Path) -> None:
    """--runs 2 where run 0 erred, then run 0 again: run 0 is the retry, run 1 the original
    second attempt — not three runs, and no error left beside the rate."""
    answer = tmp_path / "answer.md"
    answer.write_text(GOOD)
    base = ("run", "lru-cache", "-m", "a", "-d", "replay", "-p", str(answer))
    cli_call(*base, "--runs", "2", results_dir=results_dir)
    results = load_results([results_dir]).results
    first = min(results, key=lambda r: r["started_at"])
    path = next(p for p in results_dir.glob("*.json")
                if json.loads(p.read_text())["run_id"] == first["run_id"])
    failed = {**first, "result": "error", "pass_at_1": False,
              "error": {"kind": "infra", "message": "server down"}}
    path.write_text(json.dumps(failed))  # run 0 as a dead server would have left it
    assert cli_call(*base, "--retry-errors", results_dir=results_dir).code == 0
    results = load_results([results_dir]).results
    assert len(results) == 3
    runs = by_run(without_retried_errors(results))
    assert [[r["run_index"] for r in run] for run in runs] == [[0], [1]]
    assert all(r["result"] == "pass" for run in runs for r in run)
    (row,) = model_rows(grouped(results))
    assert (row.runs, row.passed, row.errors) == (2, 2, 0)
    (card,) = scorecards(grouped(results))
    assert (card.suites["coding"].runs, card.suites["coding"].errors) == (2, 0)
