"""A TTFT measured with other attempts in flight (settings.in_flight > 1) includes their
queue (`--jobs 4` against a one-slot server: 38.7 s against 6.3 s alone): every view that
shows a mean TTFT says how many such attempts it holds."""

from __future__ import annotations

import copy
import csv
import io
import json
from typing import Any

import pytest

from benchrig.core.errors import BenchRigError
from benchrig.environment import environment
from benchrig.report import render
from benchrig.report.compare import compare, render_json, render_text
from benchrig.resultio.files import validate
from tests.helpers.result_sets import attempt
from tests.helpers.results import EXAMPLE

TASKS = [f"t{i}" for i in range(6)]


def _crowded(model: str, in_flight: int, ttft_ms: float, **kwargs: Any) -> list[dict[str, Any]]:
    results = []
    for t in TASKS:
        r = attempt(model, t, "pass", ttft_ms=ttft_ms, **kwargs)
        r["settings"] = {**r["settings"], "jobs": in_flight, "in_flight": in_flight}
        results.append(r)
    return results


def test_the_table_and_the_scorecards_flag_a_queued_ttft() -> None:
    results = _crowded("jobs4", 4, 38_700.0)
    text = render(results, "table")
    row = next(line for line in text.splitlines() if line.startswith("jobs4"))
    assert "38700 (6 in flight)" in row
    assert "avg TTFT 38.70 s (6 in flight)" in text
    assert "measured with other attempts in flight" in text
    assert "(6 in flight)" in render(results, "markdown")
    alone = render(_crowded("alone", 1, 6_300.0), "table")
    assert "in flight" not in alone


def test_csv_and_json_carry_the_count() -> None:
    results = _crowded("jobs4", 4, 38_700.0) + _crowded("alone", 1, 6_300.0)
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(render(results, "csv")))}
    assert (rows["jobs4"]["ttft_in_flight"], rows["alone"]["ttft_in_flight"]) == ("6", "0")
    assert rows["jobs4"]["reasoning_ttft_in_flight"] == "6"
    models = {m["model"]: m for m in json.loads(render(results, "json"))["models"]}
    assert models["jobs4"]["ttft_in_flight"] == 6
    assert models["jobs4"]["suites"]["reasoning"]["ttft_in_flight"] == 6
    assert models["alone"]["ttft_in_flight"] == 0
    per_attempt = list(csv.DictReader(io.StringIO(render(results, "csv", per_attempt=True))))
    assert {r["in_flight"] for r in per_attempt if r["model"] == "jobs4"} == {"4"}


def test_compare_flags_a_ttft_ratio_over_queued_attempts() -> None:
    results = (_crowded("jobs4", 4, 38_700.0, started="2026-11-30T11:00:00Z")
               + _crowded("alone", 1, 6_300.0))
    found = compare(results, "jobs4", "alone")
    text = render_text(found)
    assert "6 of A's TTFTs were measured with other attempts in flight" in text
    assert json.loads(render_json(found))["a"]["ttft_in_flight"] == 6


def test_a_result_records_the_machines_load_average() -> None:
    """A speed figure from a machine busy with other jobs was indistinguishable from a slow
    model: every result now carries the load average beside the CPU count."""
    found = environment({"name": "replay"})
    assert set(found["load_avg"]) == {"1m", "5m", "15m"}
    result = {**copy.deepcopy(EXAMPLE), "environment": found}
    validate(result)
    assert "load_avg" not in EXAMPLE["environment"]  # older results stay valid
    result["environment"]["load_avg"] = {"1m": -1.0, "5m": 0.0, "15m": 0.0}
    with pytest.raises(BenchRigError):
        validate(result)
