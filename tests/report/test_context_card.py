"""The context suite's scorecard from fixed results: the score is the share of windows found
(context_retrieval_pct) with its range over runs, it is what the composite averages, and a
spill point that differs between runs is shown with each value."""

from __future__ import annotations

import copy
import csv
import io
import json
from typing import Any

from benchrig.report import render
from benchrig.resultio.files import validate
from tests.helpers.scorecard_fixture import Builder

WINDOWS = [512, 1024, 2048, 4096, 8192]


def memory(placement: str) -> dict[str, Any]:
    return {"rss_before_bytes": None, "rss_after_bytes": None, "rss_growth_bytes": None,
            "kv_cache_bytes": None, "size_bytes": 4 << 30,
            "size_vram_bytes": 4 << 30 if placement == "gpu" else 3 << 30,
            "placement": placement, "source": "ollama /api/ps", "reason": None}


def step(window: int, found: bool, placement: str) -> dict[str, Any]:
    return {"window": window, "code": 100000 + window, "expected": str(100000 + window),
            "passed": found, "message": "", "error": None,
            "warmup": {"ran": True, "reason": None, "load_time_s": 1.5, "wall_s": 2.0},
            "load_time_s": 1.5, "prompt_tokens_target": round(0.75 * window),
            "prompt_tokens_counted": round(0.75 * window),
            "prompt_tokens_actual": round(0.75 * window) + 10, "fill_method": "estimate",
            "context_size": window, "ttft_ms": window / 2, "prefill_tokens_per_s": 1000.0,
            "prefill_tokens_per_s_client": 1500.0, "tokens_per_s": 40.0,
            "finish_reason": "stop", "memory": memory(placement)}


def results() -> list[dict[str, Any]]:
    """Two runs: 3 of 5 windows found, then 5 of 5; the KV cache spills at 4096, then 8192."""
    b = Builder()
    for run, (found, spill) in enumerate([(3, 4096), (5, 8192)]):
        b.add("alpha", "ollama", "context", "context-needle", run,
              "pass" if found == 5 else "fail", checks=(found, 5))
        steps = [step(w, i < found, "gpu" if w < spill else "split")
                 for i, w in enumerate(WINDOWS)]
        b.results[-1]["evidence"] = {"check": "needle", "context": {
            "scenario": "context-needle", "needle_seed": run, "fill_ratio": 0.75,
            "needle_depth": 0.5, "steps": steps, "spill_point": spill,
            "spill_note": f"the KV cache left GPU memory at window {spill}"}}
        validate(b.results[-1])
    return b.results


def test_retrieval_is_by_window_with_its_range_and_makes_the_composite() -> None:
    text = render(results(), "table")
    assert "composite 80.0% [60.0-100.0] (mean of context)" in text
    assert "context_retrieval_pct 80.0% [60.0-100.0] (8/10 windows)" in text
    assert "spill point varies: 4096 (1×), 8192 (1×)" in text
    assert "all suites: it mixes context windows" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("4096 "))
    assert row.split()[:4] == ["4096", "3082", "of", "3072"]
    assert "size 4096.0 MiB, VRAM" in row and row.split()[-1] == "1/2"


def test_the_csv_names_the_columns_as_the_specification_does() -> None:
    header, line = csv.reader(io.StringIO(render(results(), "csv")))
    row = dict(zip(header, line, strict=True))
    assert row["context_spill_point"] == "varies: 4096 (1×), 8192 (1×)"
    assert row["context_retrieval_rate"] == "0.8000"  # 0-1, as every rate of the CSV
    assert (row["context_retrieval_rate_min"], row["context_retrieval_rate_max"]) == (
        "0.6000", "1.0000")
    assert row["context_pass_rate"] == "0.5000"  # attempts with every window found
    assert row["load_time_sec"] == "1.5000"
    assert row["context_8192_prompt_tokens_actual"] == "6154.000"
    assert row["context_8192_ttft_sec"] == "4.096"
    assert row["context_8192_retrieval_rate"] == "0.5000"
    assert row["context_2048_placement"] == "gpu" and row["context_8192_placement"] == "split"


def test_the_table_and_the_scorecard_show_one_context_figure() -> None:
    """3 of 5 windows found: the table said `0% (0/1)` above the card's 60%; both say 3/5."""
    text = render(results()[:1], "table")
    row = next(line for line in text.splitlines() if line.startswith("alpha"))
    assert "60% (3/5)" in row
    assert "context_retrieval_pct 60.0% (3/5 windows)" in text
    assert "one verdict per window" in text


def _with_infra_errors() -> list[dict[str, Any]]:
    """results(), plus an attempt the server failed (every step an infra error, nothing
    found), plus, in the second run, window 8192 failed by infra instead of found."""
    found = results()
    dead = copy.deepcopy(found[0])
    dead.update(result="error", error={"kind": "infra", "message": "server down"},
                run_id="dead00000000", run_index=2)
    dead["checks"] = {**dead["checks"], "passed": 0}
    for s in dead["evidence"]["context"]["steps"]:
        s.update(passed=False, error={"kind": "infra", "message": "down", "phase": "request"},
                 memory=memory("cpu"))
    validate(dead)
    return [*found, dead]


def test_an_infra_error_changes_no_per_window_figure() -> None:
    before = render(results(), "table")
    after = render(_with_infra_errors(), "table")
    steps = [line for line in before.splitlines() if line.startswith("      ")]
    assert steps and steps == [line for line in after.splitlines() if line.startswith("      ")]
    assert "context_retrieval_pct 80.0% [60.0-100.0] (8/10 windows)" in after
    assert "spill point varies: 4096 (1×), 8192 (1×)" in after
    assert "80% (8/10), 1 error" in after
    cells = dict(zip(*csv.reader(io.StringIO(render(_with_infra_errors(), "csv"))),
                     strict=True))
    assert cells["context_8192_retrieval_rate"] == "0.5000"


def test_a_window_failed_by_infra_is_beside_the_retrieval_not_in_it() -> None:
    found = results()
    last = found[1]["evidence"]["context"]["steps"][-1]
    last.update(passed=False, error={"kind": "infra", "message": "reset", "phase": "request"})
    found[1]["checks"] = {**found[1]["checks"], "passed": 4}
    text = render(found, "table")
    assert "context_retrieval_pct 77.8% [60.0-100.0] (7/9 windows)" in text  # 3/5 + 4/4
    assert "78% (7/9)" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("8192 "))
    assert row.endswith("split      0/1 (1 error)")


def test_every_csv_rate_is_on_one_scale_its_header_names() -> None:
    """A `_pct` column (80.00) beside fractions (0.5000) was one misread away from 100×: every
    rate or share is 0-1, under a name ending `_rate` or `_share` (`_min`/`_max` too)."""
    header, line = csv.reader(io.StringIO(render(results(), "csv")))
    row = dict(zip(header, line, strict=True))
    assert not [c for c in header if "pct" in c or "percent" in c]
    rates = [c for c in header if c.removesuffix("_min").removesuffix("_max")
             .endswith(("_rate", "_share", "_score"))]
    assert "context_retrieval_rate" in rates and "pass_rate" in rates
    assert all(0 <= float(row[c]) <= 1 for c in rates if row[c])


def test_the_json_summary_carries_context_retrieval_by_name() -> None:
    (model,) = json.loads(render(results(), "json"))["models"]
    context = model["suites"]["context"]
    assert context["context_retrieval"] == {"value": 0.8, "found": 8, "windows": 10,
                                            "run_range": {"low": 0.6, "high": 1.0, "runs": 2}}
    assert context["spill_point"] == "varies: 4096 (1×), 8192 (1×)"
    last = context["windows"][-1]
    assert (last["window"], last["found"], last["decided"], last["retrieval"]) == (
        8192, 1, 2, 0.5)
    assert model["pass_rate"]["value"] == 0.8  # by window, as the table and the card
