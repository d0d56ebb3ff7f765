"""`report --html` reads each result file once: its drill-downs are made from the same read
as its record, so a file swapped while the page is being made changes nothing on it."""

from __future__ import annotations

import errno
import importlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import benchrig.resultio.files as result_module
from tests.helpers.result_sets import attempt, write

# the module: `benchrig.report.build` as an attribute is the package's function of that name
build_module = importlib.import_module("benchrig.report.build")


def test_a_result_swapped_while_the_page_is_made_shows_as_it_was_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: once the results are read, one file is replaced by another attempt's.
    The page shows every attempt whole (its evidence) as it was read, and no file is read
    twice (the drill-downs re-read each file: twice the reading of a 100,000-result report)."""
    from benchrig.cli.results import report

    folder = write(tmp_path / "results", [
        attempt("alpha", f"t{i}", "fail", evidence={"stdout": f"mine {i}"}) for i in range(3)])
    files = sorted(folder.glob("*.json"))
    reads: Counter[str] = Counter()
    read = result_module.read_regular

    def counted(file: Path, cap: int, follow: bool = False) -> bytes:
        reads[Path(file).name] += 1
        return read(file, cap, follow)

    built = build_module.build

    def swapped(*args: Any, **kwargs: Any) -> Any:  # after the reading, before the page
        files[0].write_bytes(files[1].read_bytes())
        return built(*args, **kwargs)

    monkeypatch.setattr(result_module, "read_regular", counted)
    monkeypatch.setattr(build_module, "build", swapped)
    page = tmp_path / "report.html"
    report([folder], html=page, force=False, model=None, suite=None, label=None,
           since=None, driver=None)
    text = page.read_text(encoding="utf-8")
    block = text[text.index('id="benchrig-data">') + 19:]
    details = json.loads(block[:block.index("</script>")])["details"]
    shown = sorted(d["evidence"] for d in details)
    assert [("mine 0" in e, "mine 1" in e, "mine 2" in e) for e in shown] == [
        (True, False, False), (False, True, False), (False, False, True)]
    assert reads == Counter({f.name: 1 for f in files})


class _Cycle:
    """An object that refers to itself: garbage only the cyclic collector frees."""

    def __init__(self) -> None:
        self.me = self


def test_what_a_view_makes_while_reading_does_not_pile_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: per-file work beside the reading that leaves reference cycles (json's
    indenting encoder leaves one per call: the drill-downs' evidence), while the collector
    is paused for the records. What it left is freed as the files are read, not kept to
    the end (44 MiB more at the peak of a 100,000-result report)."""
    import weakref

    monkeypatch.setattr(result_module, "YOUNG_EVERY", 10, raising=False)
    folder = write(tmp_path / "results", [attempt("alpha", f"t{i}", "pass")
                                          for i in range(40)])
    alive: weakref.WeakSet[_Cycle] = weakref.WeakSet()
    most = 0

    def also(_record: Any, _result: dict[str, Any]) -> None:
        nonlocal most
        alive.add(_Cycle())  # dropped at once: garbage, held only by its own cycle
        most = max(most, len(alive))

    result_module.load_records([folder], also)
    assert most <= 11, f"{most} cycles of 40 files still held while reading"


class _FullDisk(io.BytesIO):
    """A temporary file on a disk that fills after `room` bytes."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


def test_a_full_disk_for_the_spool_still_gives_every_drilldown(tmp_path: Path) -> None:
    """The attack: the temporary file the drill-downs are spooled to fills the disk part way.
    No exception: the attempts it holds no part of are made by reading their files again,
    exactly as the spool would have made them."""
    from benchrig.report.viewer import Spool, island_parts, payload_parts

    folder = write(tmp_path / "results", [
        attempt("alpha", f"t{i}", "fail", evidence={"stdout": f"mine {i}"}) for i in range(4)])
    whole_spool = Spool(io.BytesIO())
    records = result_module.load_records([folder], whole_spool.add).records
    full = Spool(_FullDisk(room=1500))
    result_module.load_records([folder], full.add)

    def page(spool: Spool | None) -> str:  # the drill-downs as the page holds them
        return "".join(island_parts(
            {"details": payload_parts(records, True, spool=spool)["details"]}))

    expected = page(whole_spool)
    assert page(full) == expected
    assert page(None) == expected  # no spool at all
    assert all("mine" in d["evidence"] for d in json.loads(expected)["details"])


def test_a_filtered_report_makes_drilldowns_only_for_what_it_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack on the cost: `report --model alpha` over a folder that is mostly another
    model's. Only the results the filters keep get a drill-down made (it re-read one file per
    kept attempt before; making every file's would cost more than that)."""
    from benchrig.cli.results import report
    from benchrig.report import viewer

    folder = write(tmp_path / "results", [attempt("alpha", "t0", "pass")] + [
        attempt("beta", f"t{i}", "fail") for i in range(5)])
    made: list[str] = []
    real = viewer.result_part

    def counted(result: dict[str, Any], caps: Any = viewer.STATIC) -> dict[str, Any]:
        made.append(str(result["model"]))
        return real(result, caps)

    monkeypatch.setattr(viewer, "result_part", counted)
    page = tmp_path / "report.html"
    report([folder], html=page, force=False, model=["alpha"], suite=None, label=None,
           since=None, driver=None)
    assert made == ["alpha"]
