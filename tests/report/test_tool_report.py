"""Tool-use figures: every rate over exactly its denominator, `n/a` on an empty one, the
unsupported and the errored counted apart, and nothing of it in the composite or the timing
averages; the rendered summary pinned in a golden file."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from benchrig.checks.tool_calls import unjudged_turns
from benchrig.drivers import get_driver
from benchrig.drivers.replay import ReplayDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.report import render
from benchrig.report.tooluse import Rate, tool_figures
from benchrig.resultio.record import as_records
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS, answer_file, cli_call
from tests.helpers.toolcases import REFUSAL, oracle, write

GOLDEN = ROOT / "tests" / "fixtures" / "golden" / "tool_use_summary.txt"


def attempt(case: str, transcript: dict[str, Any] | None, folder: Path,
            driver: str = "replay", model: str = "toolbot") -> dict[str, Any]:
    task = load_task(TASKS / f"{case}.md")
    provider = (str(write(folder / f"{case}-{len(list(folder.iterdir()))}.json", transcript))
                if transcript is not None else None)
    engine = ReplayDriver() if driver == "replay" else get_driver(driver)
    return run_attempt(task, model, engine, provider, settings_for(task, Overrides()),
                       folder / "results", agent="replay").result


def mixed(folder: Path) -> list[dict[str, Any]]:
    """Two passes, a wrong first step (its second turn skipped), a refusal, a false call, an
    unsupported case, an infra error and a timeout."""
    (folder / "results").mkdir()
    wrong_first = oracle("tool-twostep-order")
    wrong_first["turns"][0]["tool_calls"][0]["name"] = "track_package"
    false_call = {"turns": [{"text": "", "tool_calls": [
        {"name": "get_stock_price", "arguments": '{"ticker": "84"}'}]}]}
    results = [
        attempt("tool-twostep-order", oracle("tool-twostep-order"), folder),
        attempt("tool-enum-currency", oracle("tool-enum-currency"), folder),
        attempt("tool-twostep-order", wrong_first, folder),
        attempt("tool-nocall-capital", {"turns": [{"text": REFUSAL}]}, folder),
        attempt("tool-nocall-arithmetic", false_call, folder),
        attempt("tool-select-weather", None, folder, driver="pi"),
        attempt("tool-select-time", {"turns": []}, folder),  # no recorded reply: infra
    ]
    timeout = copy.deepcopy(results[-1])
    task = load_task(TASKS / "tool-twostep-weather-answer.md")
    timeout.update(task="tool-twostep-weather-answer", result="error",
                   error={"kind": "timeout", "message": "ran out", "phase": "tool turn"},
                   checks={"passed": 0, "total": 2, "details": [
                       {"name": d.name, "passed": False, "message": d.message,
                        "duration_s": 0.0} for d in unjudged_turns(task, "timeout")]})
    return [*results, timeout]


def test_every_rate_has_exactly_its_denominator(tmp_path: Path) -> None:
    results = mixed(tmp_path)
    assert [r["result"] for r in results] == ["pass", "pass", "fail", "fail", "fail",
                                              "unsupported", "error", "error"]
    f = tool_figures(as_records(results))
    # eligible: the five verdicts and the timeout; unsupported and infra apart
    assert f.task_success == Rate(2, 6)
    assert (f.unsupported, f.errors, f.timeouts) == (1, 1, 1)
    # call turns: 2 + 1 + 2 (wrong first step) + 1 (the timeout's call turn)
    assert f.selection == Rate(3, 6) and f.arguments == Rate(3, 6)
    assert f.structured == Rate(4, 6)  # the wrong tool was still a structured call
    # answer turns: the refusal, the false call and the timeout's answer turn
    assert f.abstention == Rate(0, 3) and f.false_calls == Rate(1, 3)
    assert f.skipped_turns == 1


def test_an_empty_denominator_is_na_never_zero() -> None:
    assert Rate(0, 0).value is None and Rate(0, 0).text() == "n/a (0/0)"
    assert Rate(0, 4).text() == "0.0% (0/4)"


def test_tool_figures_stay_out_of_the_composite_and_the_timing_averages(
        tmp_path: Path) -> None:
    results = [r for r in mixed(tmp_path) if r["result"] != "error"]
    for r in results:  # as if a server had reported figures for the tool turns
        r["metrics"].update(wall_s=99.0, ttft_ms=5000.0, tokens_per_s=1.0)
    text = render(results, "table")
    assert "composite —" in text and "tool selection 50.0% (3/6)" not in text
    row = text.splitlines()[2]
    assert row.split()[-4:] == ["—", "—", "—", "—"]  # tool-only: legacy timing unavailable
    task = load_task(TASKS / "bat-and-ball.md")
    reasoning = run_attempt(task, "toolbot", ReplayDriver(),
                            str(answer_file(tmp_path, "5 cents.\n\nFinal answer: 5")),
                            settings_for(task, Overrides()), tmp_path / "results",
                            agent="replay").result
    reasoning["metrics"].update(wall_s=1.0, ttft_ms=100.0, tokens_per_s=50.0)
    text = render([*results, reasoning], "table")
    assert text.splitlines()[2].split()[-4:] == ["50.0", "100", "1.00", "—"]
    assert "composite 100.0% (mean of reasoning)" in text


def test_the_rendered_tool_scorecard_is_pinned(tmp_path: Path) -> None:
    mixed(tmp_path)
    folder = tmp_path / "results"
    for path in folder.glob("*.json"):  # stable order and no machine-specific text
        data = json.loads(path.read_text())
        data["notes"] = data["notes"].replace(str(tmp_path), "<tmp>")
        path.write_text(json.dumps(data))
    ran = cli_call("summary", str(folder), results_dir=folder)
    assert ran.code == 0, ran.stderr
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(ran.stdout, encoding="utf-8")
    assert ran.stdout == GOLDEN.read_text(encoding="utf-8")


def test_the_csv_export_carries_every_rate_with_its_parts(tmp_path: Path) -> None:
    import csv
    import io

    results = mixed(tmp_path)
    (row,) = list(csv.DictReader(io.StringIO(render(results, "csv"))))
    assert (row["tool_use_selection"], row["tool_use_selection_numerator"],
            row["tool_use_selection_denominator"]) == ("0.5000", "3", "6")
    assert row["tool_use_false_calls_denominator"] == "3" and row["tool_use_unsupported"] == "1"
    unsupported = [r for r in results if r["result"] == "unsupported"]
    (row,) = list(csv.DictReader(io.StringIO(render(unsupported, "csv"))))
    # an empty denominator: an empty rate, never 0
    assert (row["tool_use_task_success"], row["tool_use_task_success_denominator"]) == ("", "0")


def test_the_json_summary_carries_every_rate_by_name(tmp_path: Path) -> None:
    """A script reading `summary --format json` found no tool-use rate at all (only the task
    pass rate): each rate is there by its CSV name, with its parts; n/a is null, never 0."""
    results = mixed(tmp_path)
    (model,) = json.loads(render(results, "json"))["models"]
    tools = model["suites"]["tool_use"]["tool_use"]
    assert tools["selection"] == {"value": 0.5, "numerator": 3, "denominator": 6}
    assert tools["false_calls"]["denominator"] == 3 and tools["unsupported"] == 1
    unsupported = [r for r in results if r["result"] == "unsupported"]
    (model,) = json.loads(render(unsupported, "json"))["models"]
    assert model["suites"]["tool_use"]["tool_use"]["task_success"]["value"] is None
