"""Result files are read exactly as `json.loads` reads them, though orjson reads most of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchrig.resultio.files import _parsed


def as_json_reads(path: Path) -> tuple[str, Any]:
    try:
        return "ok", json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def as_benchrig_reads(path: Path) -> tuple[str, Any]:
    try:
        return "ok", _parsed(path)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def same(path: Path) -> None:
    # repr tells 1 from 1.0 and True, -0.0 from 0.0, and shows NaN
    assert repr(as_benchrig_reads(path)) == repr(as_json_reads(path))


EDGES = [b'{"a": 1, "a": 2}', b"1E400", b"-0", b"-0.0", b'["\\ud800"]', b'"a\tb"', b"NaN",
         b"[Infinity, -Infinity]", b"18446744073709551616", b"-9223372036854775809",
         b"9223372036854775807", b"18446744073709551615", b"\xef\xbb\xbf{}", b"{} x",
         b"  {}  \n", b"1.0", b"[1e-400]", b'"\\u0000"', b'{"\\ud83d\\ude00": 1}',
         b"123456789012345678901234567890.5", b"0.1e1", b"1.7976931348623157e309", b"",
         b"\xff", b'{"a":\r\n x}', b"[" * 5000 + b"]" * 5000, b'{"n": 1e0000000000000000001}',
         b'"\xc3\x28"', b"[1,]", b"{'a': 1}", b"[.5]", b"[01]", b"\x00", b'{"a": 1}\x00',
         b"[0.00012345678901234567, 12345678901234567890]", b"[0.00012345678901234567]",
         b'["12345678901234567890", 1.0000000000000000000001]', b"-18446744073709551617"]


@pytest.mark.parametrize("data", EDGES, ids=[repr(e[:30]) for e in EDGES])
def test_edge_cases_are_read_as_json_reads_them(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(data)
    same(path)


VALUES = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers()
    | st.integers(min_value=2**60, max_value=2**70).map(lambda n: n * st_sign(n))
    | st.text(), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


def st_sign(n: int) -> int:
    return -1 if n % 2 else 1


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.integers(min_value=0, max_value=3),
       st.lists(st.tuples(st.integers(min_value=0), st.binary(max_size=2)), max_size=2))
def test_any_file_is_read_as_json_reads_it(tmp_path_factory: pytest.TempPathFactory,
                                           value: Any, ascii_only: bool, indent: int,
                                           edits: list[tuple[int, bytes]]) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only, indent=indent or None).encode(
        "utf-8", "surrogatepass")
    for where, inserted in edits:  # a damaged file: bytes put in at some place
        at = where % (len(data) + 1)
        data = data[:at] + inserted + data[at:]
    path = tmp_path_factory.mktemp("parse") / "r.json"
    path.write_bytes(data)
    same(path)
