"""The sample browser's rows carry a dataset task's sample id, filterable like the task."""

from __future__ import annotations

from pathlib import Path

from benchrig.report.viewer import COLUMNS, payload
from benchrig.resultio.record import Record, from_json
from tests.helpers.result_sets import attempt

VIEWER_JS = Path(__file__).resolve().parents[2] / "benchrig/report/templates/viewer.js"


def _result(sample: str | None) -> Record:
    found = attempt("m", "capitals", "pass", agent="replay")
    if sample is not None:
        found["sample_id"] = sample
    return from_json(found)


def test_rows_name_their_sample() -> None:
    data = payload([_result("fr"), _result(None)], embed_details=False)
    at = COLUMNS.index("sample")
    assert [r[at] for r in data["rows"]] == ["fr", "—"]
    assert data["columns"] == list(COLUMNS)


def test_the_page_filters_and_shows_by_sample() -> None:
    script = VIEWER_JS.read_text(encoding="utf-8")
    assert '"task", "sample", "result", "error"];' in script  # a filter of its own
    assert "rows[j][C.sample] === r[C.sample]" in script  # side by side: the same sample
