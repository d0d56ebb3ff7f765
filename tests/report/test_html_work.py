"""`report --html` does each attempt's work once: what the page holds of an attempt is made
while its file is in hand and written as it was made, the same bytes as before."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import benchrig.resultio.files as result_module
from benchrig.report import viewer
from tests.helpers.result_sets import attempt, write


def test_a_spooled_drilldown_is_written_as_it_was_spooled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack on the cost: 100,000 attempts, each drill-down made into JSON text while
    its file was read, then parsed back and encoded again as the page was written (twice the
    encoding, plus a parse, per attempt). The page now writes the spooled text as it is;
    the same page as one made without a spool."""
    folder = write(tmp_path / "results", [
        attempt("alpha", f"t{i}", "fail", evidence={"stdout": f"<mine> {i}\u2028"})
        for i in range(5)])
    spool = viewer.Spool(io.BytesIO())
    records = result_module.load_records([folder], spool.add).records

    def page(spool: viewer.Spool | None) -> str:
        return "".join(viewer.island_parts(
            {"details": viewer.payload_parts(records, True, spool=spool)["details"]}))

    expected = page(None)  # each file read again: every drill-down encoded here
    encode = viewer._dumps

    def refused(value: Any) -> str:
        assert not (isinstance(value, dict) and "checks" in value), "a drill-down re-encoded"
        return encode(value)

    monkeypatch.setattr(viewer, "_dumps", refused)
    assert page(spool) == expected
    assert "<" not in expected and "\u2028" not in expected  # island-safe as before
    assert [d["evidence"].count("mine") for d in json.loads(expected)["details"]] == [1] * 5


def test_the_compact_encoder_writes_the_island_s_own_text() -> None:
    """The spooled drill-downs are encoded by orjson: byte for byte what json writes, for
    every character and every type a drill-down holds (text, flags, whole numbers, None,
    lists, objects keyed by text); what orjson refuses (a lone surrogate, an integer past
    64 bits) is written by json."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    value = {"a\n\"": [every, True, False, None, 0, -7, 2**63 - 1],
             "nested": {"x": [[every[:300], False]]}}
    assert viewer._compact(value) == viewer._dumps(value)
    for refused in ({"s": "\ud800"}, [2**70]):
        assert viewer._compact(refused) == viewer._dumps(refused)


def test_an_impossible_figure_is_refused_in_the_drilldown_made_from_one_pass(
        tmp_path: Path) -> None:
    """The attack: a hand-edited result with an impossible TTFT (ten years) and one
    that names a refused figure of its own. The spool runs credible() only where the record
    says it refused a figure or the file named one; both drill-downs still say `rejected`,
    exactly as a drill-down made from the file again."""
    forged = attempt("alpha", "t0", "fail", ttft_ms=3.2e11)
    named = attempt("alpha", "t1", "fail")
    named["metrics"]["rejected"] = {"tokens_per_s": "the driver's own refusal"}
    folder = write(tmp_path / "results", [forged, named, attempt("alpha", "t2", "pass")])
    spool = viewer.Spool(io.BytesIO())
    records = result_module.load_records([folder], spool.add).records

    def page(spool: viewer.Spool | None) -> str:
        return "".join(viewer.island_parts(
            {"details": viewer.payload_parts(records, True, spool=spool)["details"]}))

    assert page(spool) == page(None)
    shown = {tuple(row[:2]) for d in json.loads(page(spool))["details"]
             for row in d["metrics"]}
    assert ("ttft_ms", "rejected") in shown and ("tokens_per_s", "rejected") in shown
    assert ("ttft_ms", "None") in shown  # the refused figure is unknown, never shown


def test_figure_names_are_kept_once_per_set_and_boundedly(tmp_path: Path) -> None:
    """The attack on memory: a folder of hand-made files, each with figures under names no
    other file uses (long ones too). The drill-downs' rows are the same; what is kept of the
    names is bounded (PLANS_CAP sets, none longer than PLAN_CHARACTERS)."""
    viewer._PLANS.clear()
    long_name = "x" * (viewer.PLAN_CHARACTERS + 1)
    shown = []
    for i in range(viewer.PLANS_CAP + 50):
        metrics = {"wall_s": 1.5, f"figure_{i}": i, f"figure_{i}_source": "counted"}
        shown.append(viewer._metrics(metrics))
    assert viewer._metrics({long_name: 1.0}) == [[viewer.label(long_name), "1", ""]]
    assert len(viewer._PLANS) <= viewer.PLANS_CAP
    assert all(sum(len(n) for n in names) <= viewer.PLAN_CHARACTERS
               for names in viewer._PLANS)
    assert shown[7] == [["wall_s", "1.5", ""], ["figure_7", "7", "counted"]]


@pytest.mark.parametrize("figure", [None, 0.0, -0.0, 0.1, 1234.5, 1e16, 1e300,
                                    float("inf"), float("nan")])
def test_a_row_is_written_as_json_writes_it(figure: float | None) -> None:
    """Rows are encoded by orjson where that is json's own text: any figure, finite or not
    (json writes Infinity and NaN, orjson null: those rows go through json)."""
    row = ["m", "a", "—", "reasoning", "t<0>", "pass", "", figure, figure, "1/1",
           "2026-11-30T10:00:00Z", "", 3, "—"]
    assert viewer.row_text(row) == viewer._safe(viewer._dumps(row))


def test_a_text_kept_for_the_next_attempt_is_short() -> None:
    """The attack on memory: notes and check messages of megabytes in every file. A text's
    printable form is kept for the attempts that repeat it only when it is short
    (SHOWN_KEPT characters): the long ones are made each time, never kept."""
    viewer._kept_printable.cache_clear()
    long_text = "\u202e" + "x" * (viewer.SHOWN_KEPT + 1)
    assert viewer._shown(long_text, 50) == viewer.printable(long_text, 50)
    assert viewer._kept_printable.cache_info().currsize == 0
    assert viewer._shown("expected 42\n", 300) == viewer.printable("expected 42\n", 300)
    assert viewer._shown("expected 42\n", 300) == "expected 42⏎"
    assert viewer._kept_printable.cache_info().hits == 1
    # a kept text keeps its caller's cap, the second time (from the cache) as the first
    medium = "m" * (viewer.SHOWN_KEPT - 50)
    for _ in range(2):
        assert viewer._shown(medium, 300) == viewer.printable(medium, 300)
        assert viewer._shown(medium, 300).endswith("more characters cut]")


@pytest.mark.parametrize("on_disk", [False, True])
def test_a_spool_written_after_it_was_read_keeps_every_part(tmp_path: Path,
                                                           on_disk: bool) -> None:
    """The attack on the spool's bookkeeping: a part read back (in memory the file's position
    moved into the middle; on the disk a line still in the write buffer) and then more
    added. Each addition still lands at the end: every part reads back whole, the first as
    it was."""
    import tempfile

    folder = write(tmp_path / "results", [attempt("alpha", f"t{i}", "fail") for i in range(3)])
    records = result_module.load_records([folder]).records
    data = {r.path: json.loads(r.path.read_text()) for r in records if r.path is not None}
    with tempfile.TemporaryFile() if on_disk else io.BytesIO() as file:
        spool = viewer.Spool(file)
        spool.add(records[0], data[records[0].path])
        spool.add(records[1], data[records[1].path])
        first = spool.text(records[0])
        spool.add(records[2], data[records[2].path])
        assert spool.text(records[0]) == first
        shown = [json.loads(str(spool.text(r)))["hash"] for r in records]
    assert shown == [r.task_hash for r in records]


def test_a_spool_line_holding_a_raw_angle_bracket_is_not_taken(tmp_path: Path) -> None:
    """Spooled lines go into the page's <script> island as they are: one that was changed
    on its way back (a raw "<", which the spool never writes) fails the spool, whose
    callers then make the drill-down again from the file."""
    import tempfile

    folder = write(tmp_path / "results", [attempt("alpha", "t1", "fail", notes="</script>")])
    records = result_module.load_records([folder]).records
    data = {r.path: json.loads(r.path.read_text()) for r in records if r.path is not None}
    with tempfile.TemporaryFile() as file:
        spool = viewer.Spool(file)
        spool.add(records[0], data[records[0].path])
        file.flush()
        file.seek(0)
        line = file.read()
        assert b"<" not in line and b"\\u003c/script" in line
        file.seek(0)
        file.write(line.replace(b"\\u003c", b"<\\u03c", 1))  # same size, a raw "<"
        file.flush()
        assert spool.text(records[0]) is None


def test_the_task_table_is_made_once_a_page(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack on the cost: the heat map and the sample browser's pins each made the
    task table of every attempt (two passes over 100,000 attempts); now one."""
    from benchrig.report import render_html
    from benchrig.report.build import build

    folder = write(tmp_path / "results", [attempt("alpha", f"t{i}", "pass") for i in range(3)])
    report = build(result_module.load_records([folder]).records)
    made = []
    table = render_html.task_table

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return table(*args, **kwargs)

    monkeypatch.setattr(render_html, "task_table", counted)
    page = "".join(render_html.render_html_parts(report))
    assert len(made) == 1 and 't2' in page


def test_a_panel_asks_each_suite_once_not_each_attempt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack on the cost: the tool-use and context panels asked the suite registry for
    every attempt of every model row (200,000 look-ups for a 100,000-attempt page). Now each
    distinct suite of a row once; the same rows chosen, in their order."""
    from benchrig.report import panels
    from benchrig.report.grouping import grouped

    folder = write(tmp_path / "results", [
        attempt("alpha", f"t{i}", "pass", suite="tool_use" if i % 2 else "reasoning")
        for i in range(30)])
    records = result_module.load_records([folder]).records
    groups = grouped(records)
    own = panels.panel("tool_use")
    expected = [r for r in groups[0].results if panels.panel(r.suite) is own]
    asked: list[str] = []
    lookup = panels.panel

    def counted(name: str) -> Any:
        asked.append(name)
        return lookup(name)

    monkeypatch.setattr(panels, "panel", counted)
    assert panels.shown_by(groups[0].results, own) == expected
    assert sorted(asked) == ["reasoning", "tool_use"]
    asked.clear()
    assert panels.tool_rates(groups, own)[0]["name"].startswith("alpha")
    assert len(asked) == 2
