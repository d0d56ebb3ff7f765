"""The views read compact records, not whole result files: a folder of results fat with what
no view reads (evidence, environment, check messages) costs memory per record, old files still
load, and an attempt's drill-down re-reads its file as hostile input."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from benchrig.report.viewer import whole
from benchrig.resultio.record import Record, as_records, from_json, to_json
from tests.helpers.result_sets import attempt, write

FAT = 400_000  # characters of evidence no view counts, per result (16 MiB is the cap)
FILES = 40
COUNT = 120  # attempts of the page test


def _fat_folder(folder: Path) -> Path:
    return write(folder, [attempt("alpha", f"t{i}", "pass", evidence={
        "stdout": "x" * FAT}) for i in range(FILES)])


def test_the_views_keep_a_record_per_result_not_the_file(tmp_path: Path) -> None:
    """The attack: results padded with what no view reads. What summary, compare and report
    hold after loading them is a record each, not each parsed file (16 MB of them here)."""
    from benchrig.cli.results import _results

    folder = _fat_folder(tmp_path / "results")
    tracemalloc.start()
    try:
        kept = _results([folder], None, None, None, None, None)
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(kept) == FILES
    assert all(isinstance(r, Record) for r in kept)
    # a record is a few KiB; the files hold FAT characters each
    assert held < FILES * FAT / 20, f"{held:,} bytes held for {FILES} results"


def test_an_older_result_file_still_loads_with_its_newer_fields_none() -> None:
    r = attempt("alpha", "t1", "pass")
    for newer in ("label", "run_index", "truncated_thinking", "evidence", "transcript_file"):
        r.pop(newer, None)
    record = from_json(r)
    assert (record.label, record.run_index, record.truncated_thinking, record.evidence,
            record.transcript_file) == (None, None, None, None, None)
    assert record.task == "t1" and record.checks.passed == 1


def test_a_record_goes_to_json_and_back_unchanged() -> None:
    r = attempt("alpha", "t1", "fail", label="nightly", temperature=0.7,
                evidence={"tool_use": {"counts": {"call_turns": 2}}, "stdout": "dropped"})
    record = from_json(r)
    assert from_json(to_json(record)) == record
    assert record.evidence == {"tool_use": {"counts": {"call_turns": 2}}}
    assert record.settings["temperature"] == 0.7
    assert record["model"] == "alpha" and record.get("nothing") is None  # read by key too
    assert as_records([record, r]) == [record, record]
    bare = attempt("alpha", "t2", "pass")
    bare.pop("evidence", None)
    assert from_json(to_json(from_json(bare))) == from_json(bare)  # no evidence stays none


def test_a_drilldown_rereads_its_file_and_never_follows_what_replaced_it(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The whole attempt comes from its file again, read as hostile input: a file swapped
    for a link to /dev/zero, a FIFO, or another attempt gives the record's own fields.
    (A folder of tmp_path_factory's: the schema-agreement fixture reads tmp_path's files
    plainly, and would read /dev/zero forever.)"""
    folder = _fat_folder(tmp_path_factory.mktemp("swapped") / "results")
    files = sorted(folder.glob("*.json"))
    from benchrig.resultio.files import load_records

    records = load_records([folder]).records
    assert whole(records[0])["evidence"]["stdout"] == "x" * FAT  # all of it, from the file
    files[1].unlink()
    files[1].symlink_to("/dev/zero")
    files[2].unlink()
    os.mkfifo(files[2])
    files[3].write_bytes(files[4].read_bytes())  # another attempt's result
    for record in records[1:4]:
        shown = whole(record)
        assert shown["run_id"] == record.run_id and "stdout" not in shown["evidence"]


def test_a_report_page_is_written_as_it_is_made(tmp_path: Path) -> None:
    """The attack: attempts whose drill-downs fill a page of megabytes (200 failed checks
    each, every message at its cap). `report --html` writes the page as it is made: what it
    holds at its peak is a small part of the page, not the page and its data twice over."""
    import jinja2  # noqa: F401  (imported before tracing: the report imports it when used)

    from benchrig.report.render_html import _page

    _page("report.html.j2")  # compiled before tracing too: a fixed cost, not the page's
    from benchrig.cli.results import report

    checks = {"passed": 0, "total": 200, "details": [
        {"name": f"check {j}", "passed": False, "message": "m" * 300} for j in range(200)]}
    folder = write(tmp_path / "results", [attempt("alpha", f"t{i}", "fail", checks=checks)
                                          for i in range(COUNT)])
    page = tmp_path / "report.html"
    tracemalloc.start()
    try:
        report([folder], html=page, force=False, model=None, suite=None, label=None,
               since=None, driver=None)
        _held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = page.stat().st_size
    assert size > 3_000_000
    assert peak < size / 2, f"peak {peak:,} bytes for a page of {size:,}"


def test_every_declared_field_is_read_from_its_own_key(tmp_path: Path) -> None:
    """from_json names each field in the declaration's order (one call, no loop): a field
    added to Record, or two swapped, would take another key's value or its default here."""
    from dataclasses import fields

    r = attempt("alpha", "t1", "fail", run=2, label="nightly", truncated_thinking=True,
                transcript_file="t1.transcript.json", sample_id="s-7", provider="local",
                finish_reason="length", answer_excerpt="the excerpt", notes="the notes",
                evidence={"tool_use": {"counts": {"call_turns": 2}}})
    r.update(driver="the-driver", truncated=False, error={"kind": "model", "message": "m"})
    record = from_json(r, tmp_path / "r.json")
    computed = {"metrics", "checks", "settings", "evidence", "path"}
    plain = [f.name for f in fields(Record) if f.name not in computed]
    # every plain field a value of its own (by type too): a swap of any two shows
    values = [(type(r[name]), repr(r[name])) for name in plain]
    assert len(set(values)) == len(values), [n for n, v in zip(plain, values, strict=True)
                                             if values.count(v) > 1]
    assert {name: getattr(record, name) for name in plain} == {name: r[name] for name in plain}
    assert record.path == tmp_path / "r.json"
    assert record.checks.names == ("answer",) and record.settings["temperature"] == \
        r["settings"]["temperature"]
    lean = from_json(r, tmp_path / "r.json", whole=False)
    assert (lean.answer_excerpt, lean.notes, lean.path) == ("", "", None)
    assert {name: getattr(lean, name) for name in plain if name not in ("answer_excerpt",
            "notes")} == {name: r[name] for name in plain if name not in ("answer_excerpt",
                                                                          "notes")}
