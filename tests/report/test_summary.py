"""The per-model table: means over known values, pass rates, the three output formats."""

from __future__ import annotations

import csv
import io

from benchrig.report import render_csv, render_markdown, render_text
from benchrig.report.grouping import grouped
from benchrig.report.table import model_rows
from tests.helpers.results import result

RESULTS = [
    result("a", "pass", 100.0, 200.0, 0.01),
    result("a", "fail", 50.0, None, None),
    result("a", "error", None, None, None),
    result("a", "no-test", 60.0, 400.0, 0.03),
    result("b", "pass", 3000.0, 1.0, None, floored=True),
]


def test_rows_average_only_known_values() -> None:
    a, b = model_rows(grouped(RESULTS))
    assert (a.model, a.runs, a.passed, a.failed, a.errors, a.no_test) == ("a", 4, 1, 1, 1, 1)
    assert a.pass_rate == 1 / 2  # no-test and the infra error are not in the rate
    assert a.tokens_per_s == 70.0  # mean of 100, 50, 60; the error has none
    assert a.ttft_ms == 300.0
    assert a.cost_usd == 0.02
    assert b.tokens_per_s_floored and b.cost_usd is None


def test_text_table_marks_floored_rates_and_unknowns() -> None:
    text = render_text.render_table(model_rows(grouped(RESULTS)))
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["model", "agent", "attempts"]
    assert "50% (1/2), 1 error" in lines[2]
    assert "errors of the infrastructure or of BenchRig are shown beside it" in text
    assert "~3000.0" in lines[3]
    assert "—" in lines[3]  # unknown cost is shown as unknown, not 0


def test_markdown_and_csv() -> None:
    rows = model_rows(grouped(RESULTS))
    md = render_markdown.render_table(rows).splitlines()
    assert md[0].startswith("| model | agent |") and md[1].startswith("|---|")
    table = list(csv.DictReader(io.StringIO(render_csv.render_table(rows))))
    assert table[1]["eval_tok_sec_floored"] == "true"
    assert table[0]["cost_usd"] == "0.020000" and table[1]["cost_usd"] == ""


def test_an_infra_error_is_counted_beside_the_rate_never_in_it() -> None:
    """A dead server (infra) or BenchRig's own failure (harness) is not the model's
    failure: 2 passes and 2 such errors are 100 %, with the errors shown beside."""
    group = [result("m", "pass", 10.0, 1.0), result("m", "pass", 10.0, 1.0),
             result("m", "error", None, None), result("m", "error", None, None, kind="harness")]
    (row,) = model_rows(grouped(group))
    assert (row.pass_rate, row.scored, row.uncounted_errors) == (1.0, 2, 2)
    assert "100% (2/2), 2 errors" in render_text.render_table([row])
    assert "100% (2/2), 2 errors" in render_markdown.render_table([row])
    (line,) = csv.DictReader(io.StringIO(render_csv.render_table([row])))
    assert (line["pass_rate"], line["errors"], line["errors_counted"]) == ("1.0000", "2", "0")


def test_a_timeout_still_counts_against_the_model() -> None:
    group = [result("m", "pass", 10.0, 1.0), result("m", "error", None, None, kind="timeout")]
    (row,) = model_rows(grouped(group))
    assert (row.pass_rate, row.scored, row.counted_errors, row.uncounted_errors) == (
        0.5, 2, 1, 0)
    text = render_text.render_table([row])
    assert "50% (1/2)" in text and "error" not in text.split("\n")[2]
