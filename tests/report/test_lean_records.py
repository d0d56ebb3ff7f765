"""summary and compare keep lean records: no whole attempt's text (excerpt, notes, path) and
one object per repeated part (settings, errors, check names), with the same output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig.report import FORMATS, VIEWS, compare, render
from benchrig.resultio.files import load_records
from benchrig.resultio.record import SHARED_CAP, Checks, Record, Shared, from_json
from tests.conftest import cli_call
from tests.helpers import scorecard_fixture
from tests.helpers.result_sets import attempt, write

FILES = 60
NOTES = 2000  # characters of notes per result, each different


def _padded_folder(folder: Path) -> Path:
    """The attack: results fat with what no summary shows, one settings for all of them."""
    return write(folder, [attempt(model, f"t{i}", "fail" if i % 3 else "error",
                                  answer_excerpt=f"{i:04d}" * 100, notes=f"{i:05d}" * (NOTES // 5))
                          for i in range(FILES) for model in ("alpha", "beta")])


def _held(records: list[Record]) -> None:
    """What each command's records hold of the padding: nothing, and one settings."""
    assert len(records) == 2 * FILES
    assert all(r.answer_excerpt == "" and r.notes == "" and r.path is None for r in records)
    assert len({id(r.settings) for r in records}) == 1
    assert len({id(r.error) for r in records if r.error is not None}) == 1
    assert len({id(r.checks) for r in records}) == 1  # every one failed its one check
    assert len({id(r.evidence) for r in records}) == 1


def test_summary_keeps_no_whole_attempt_in_memory(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _padded_folder(tmp_path / "results")
    seen: list[list[Record]] = []
    real = render

    def spy(results: list[Record], *args: Any, **kwargs: Any) -> str:
        seen.append(list(results))
        return real(results, *args, **kwargs)

    monkeypatch.setattr("benchrig.report.render", spy)
    ran = cli_call("summary", str(folder), results_dir=folder)
    assert ran.code == 0, ran.stderr
    _held(seen[0])


def test_compare_keeps_no_whole_attempt_in_memory(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _padded_folder(tmp_path / "results")
    seen: list[list[Record]] = []
    real = compare.compare

    def spy(results: list[Record], *args: Any, **kwargs: Any) -> Any:
        seen.append(list(results))
        return real(results, *args, **kwargs)

    monkeypatch.setattr(compare, "compare", spy)
    ran = cli_call("compare", "alpha", "beta", str(folder), results_dir=folder)
    assert ran.code == 0, ran.stderr
    _held(seen[0])


def test_every_summary_and_compare_is_the_same_from_lean_records(tmp_path: Path) -> None:
    """The guard of the rule: a view that came to read a whole attempt's field would differ
    here (the golden fixture: every suite, runs, truncation, errors)."""
    folder = tmp_path / "results"
    scorecard_fixture.write(folder)
    whole = load_records([folder]).records
    lean = load_records([folder], whole=False).records
    assert lean != whole  # they do differ: the excerpts and paths are gone
    for format_ in FORMATS:
        for by in VIEWS:
            assert render(lean, format_, by=by) == render(whole, format_, by=by)
        assert render(lean, format_, table_only=True) == render(whole, format_,
                                                                 table_only=True)
    assert render(lean, "csv", per_attempt=True) == render(whole, "csv", per_attempt=True)
    pair = compare.compare(whole, "alpha", "beta")
    assert compare.render_text(compare.compare(lean, "alpha", "beta")) == \
        compare.render_text(pair)
    assert compare.render_json(compare.compare(lean, "alpha", "beta")) == \
        compare.render_json(pair)


def test_shared_parts_stay_apart_by_type_and_the_table_is_bounded() -> None:
    """0, 0.0 and False are equal in Python and print differently: never one object."""
    shared = Shared()
    temps = [shared.one({"temperature": t}) for t in (0, 0.0, False, 0)]
    assert [type(s["temperature"]) for s in temps] == [int, float, bool, int]
    assert temps[3] is temps[0] and temps[1] is not temps[0]
    counts = [shared.one(Checks(n, 1, ("a",))) for n in (1, 1.0, 1)]  # 1.0 passes "integer"
    assert type(counts[1].passed) is float and counts[2] is counts[0]
    nested = {"think": ["a"]}  # unhashable inside: kept as read
    assert shared.one(nested) is nested
    for i in range(SHARED_CAP + 10):
        shared.one({"n": i})
    late = {"n": SHARED_CAP + 5}
    assert shared.one(late) is late  # past the cap: not looked up, not kept


def test_a_load_level_keeps_its_path_for_its_samples(tmp_path: Path) -> None:
    r = attempt("alpha", "t1", "pass", evidence={"load": {"level": 1}})
    lean = from_json(r, tmp_path / "x.json", whole=False)
    assert lean.path == tmp_path / "x.json"
    assert from_json(attempt("alpha", "t2", "pass"), tmp_path / "y.json", whole=False).path \
        is None


def test_shared_settings_and_checks_read_from_the_file_stay_apart_by_type() -> None:
    """The settings and checks are looked up by a key read from the file's part: 0, 0.0 and
    False, a value None and no value, 1 and 1.0 checks passed, each stays its own."""
    shared = Shared()
    kept = [shared.kept({"temperature": t, "seed": 1}, ("temperature", "think"))
            for t in (0, 0.0, False, 0)]
    assert kept == [{"temperature": 0}] * 4
    assert [type(k["temperature"]) for k in kept] == [int, float, bool, int]
    assert kept[3] is kept[0] and kept[1] is not kept[0]
    assert shared.kept({"think": None}, ("think",)) == {"think": None}
    assert shared.kept({}, ("think",)) == {} and shared.kept(None, ("think",)) == {}
    listed = shared.kept({"think": ["a"]}, ("think",))  # unhashable inside: kept as read
    assert listed == {"think": ["a"]}
    details = [{"name": "a", "passed": True}, {"name": "b", "passed": False}]
    counts = [shared.checks({"passed": n, "total": 2, "details": details}) for n in (1, 1.0, 1)]
    assert counts[0] == Checks(1, 2, ("a", "b")) and type(counts[1].passed) is float
    assert counts[2] is counts[0] and counts[1] is not counts[0]
    assert shared.checks({"passed": 1, "total": 2, "details": details[:1]}) is not counts[0]
    r = attempt("alpha", "t1", "pass")  # a caller's records, made without a load: unshared
    assert from_json(r).settings == from_json(r).settings
    assert from_json(r).settings is not from_json(r).settings
    assert from_json(r).checks is not from_json(r).checks


def test_each_suite_is_read_whole_or_lean_by_its_own_answer(tmp_path: Path) -> None:
    """Asked once a suite, each suite keeps its own answer: a folder mixing a suite read
    whole (a plugin's own figures read its notes) with lean ones, in any order."""
    suites = ["coding", "plugin_suite", "coding", "extraction", "plugin_suite", "extraction"]
    results = []
    for i, suite in enumerate(suites):
        result = attempt("alpha", f"t{i}", "fail", notes=f"notes {i}")
        result["suite"] = suite
        results.append(result)
    folder = write(tmp_path / "results", results)
    loaded = load_records([folder], whole=lambda suite: suite == "plugin_suite")
    kept = {(r.suite, r.notes) for r in loaded.records}
    assert kept == {("coding", ""), ("extraction", ""), ("plugin_suite", "notes 1"),
                    ("plugin_suite", "notes 4")}
