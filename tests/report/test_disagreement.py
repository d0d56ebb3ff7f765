"""The attack: a tool the model runs prints a forged usage event, so the agent reports 40,000
output tokens where the gateway measured 120. The figure of record stays the gateway's and the
result flags `metrics.disagreement`; every view of the results must show that flag too, or
a forged self-report goes unseen: per model × agent row in the summary (text, Markdown, CSV,
JSON, HTML) and per attempt in the viewer."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from benchrig.report import render
from benchrig.report.build import build
from benchrig.report.render_html import context, render_html
from benchrig.report.viewer import detail
from benchrig.resultio.files import validate
from tests.helpers.result_sets import attempt

FORGED = ("pi reported 40000, the gateway measured 120 (tolerance 5 % or 16 tokens, "
          "whichever is larger; a cost 5 % or $0.0001)")
ESCAPE = "\x1b]0;pwned\x07\x1b[2J"


def _forged(task: str, message: str = FORGED) -> dict[str, Any]:
    r = attempt("smollm2", task, "fail", agent="pi")
    r["metrics"].update(output_tokens=120, output_tokens_source="server",
                        reported_output_tokens=40000,
                        disagreement={"output_tokens": message})
    return r


def _results() -> list[dict[str, Any]]:
    honest = [attempt("smollm2", f"t{i}", "pass", agent="codex") for i in range(3)]
    return [_forged("t0"), _forged("t1"), attempt("smollm2", "t2", "pass", agent="pi"),
            *honest]


def test_the_forged_result_is_valid() -> None:
    for r in _results():
        validate(r)


def test_the_table_flags_the_rows_disagreements() -> None:
    for format_ in ("table", "markdown"):
        text = render(_results(), format_)
        pi = next(line for line in text.splitlines() if "pi" in line and "smollm2" in line)
        codex = next(line for line in text.splitlines() if "codex" in line)
        assert "2 disagree" in pi, (format_, pi)
        assert "disagree" not in codex, (format_, codex)
        assert "metrics.disagreement" in text, format_  # the note says what it means
    assert "disagree" not in render([attempt("smollm2", "t0", "pass", agent="pi")], "table")


def test_csv_and_json_carry_the_count_and_the_attempts_figures() -> None:
    rows = {r["agent"]: r for r in csv.DictReader(io.StringIO(render(_results(), "csv")))}
    assert (rows["pi"]["reported_disagreements"], rows["codex"]["reported_disagreements"]) \
        == ("2", "0")
    table = {r["agent"]: r for r in csv.DictReader(io.StringIO(
        render(_results(), "csv", table_only=True)))}
    assert table["pi"]["reported_disagreements"] == "2"
    models = {m["agent"]: m for m in json.loads(render(_results(), "json"))["models"]}
    assert (models["pi"]["reported_disagreements"], models["codex"]["reported_disagreements"]) \
        == (2, 0)
    assert "reported_disagreements" in json.loads(render(_results(), "json"))["methods"]
    per_attempt = list(csv.DictReader(io.StringIO(render(_results(), "csv",
                                                         per_attempt=True))))
    assert sorted(r["disagreement"] for r in per_attempt) == [""] * 4 + ["output_tokens"] * 2


def test_the_html_report_flags_the_row() -> None:
    cards = {c["name"]: c for c in context(build(_results()))["cards"]}
    assert cards["smollm2 · pi"]["disagreements"] == 2
    assert cards["smollm2 · codex"]["disagreements"] == 0
    page = render_html(build(_results()))
    assert page.count("data-disagreements") == 1 and "2 attempts: the agent's own" in page


def test_the_viewer_shows_each_disagreement_printable() -> None:
    shown = detail(_forged("t0", message=FORGED + ESCAPE))["metrics"]
    flagged = [row for row in shown if row[1] == "disagrees"]
    assert len(flagged) == 1 and flagged[0][0] == "output_tokens"
    assert flagged[0][2].startswith("pi reported 40000, the gateway measured 120")
    assert "\x1b" not in flagged[0][2] and "\x07" not in flagged[0][2]
    assert not any(row[0] == "disagreement" for row in shown)  # not a raw JSON blob


def test_a_malformed_disagreement_is_no_flag_and_no_crash() -> None:
    """A hand-edited result file: `disagreement` not an object."""
    for bad in ("output_tokens", ["output_tokens"], 5):
        r = attempt("smollm2", "t0", "fail", agent="pi")
        r["metrics"]["disagreement"] = bad
        assert "disagree" not in render([r], "table")
        assert not [row for row in detail(r)["metrics"] if row[1] == "disagrees"]
