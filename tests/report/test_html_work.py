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
