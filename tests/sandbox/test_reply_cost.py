"""The judge's own cost: a reply cheap to send but costly to build is refused unparsed."""

from __future__ import annotations

import json
import time
import tracemalloc
from typing import Any

import pytest

from benchrig.sandbox.codec import BoundaryError, decode, encode
from benchrig.sandbox.process import (
    MAX_REPLY_BYTES,
    MAX_REPLY_VALUES,
    ProtocolViolation,
    parse_reply,
)
from benchrig.sandbox.proxy import Session

HEAD, TAIL = b'{"ok": true, "id": 1, "value": [', b"]}"
ENVELOPE_VALUES = 7  # the reply object, its three keys, "ok", "id", the value's list


def reply(items: list[bytes]) -> bytes:
    return HEAD + b",".join(items) + TAIL


def amplification(item: bytes = b"[]") -> bytes:
    """16 MiB of `item,` inside a well-formed reply: millions of values for the host."""
    return reply([item] * ((MAX_REPLY_BYTES - len(HEAD) - len(TAIL)) // (len(item) + 1)))


def cost(raw: bytes) -> tuple[BaseException | None, float, int]:
    """What the host's reply path raises for `raw`, its CPU seconds (not wall: a busy machine
    cannot fail a cost bound) and its peak allocation."""
    tracemalloc.start()
    began = time.process_time()
    try:
        decode(parse_reply(raw)["value"])
        raised = None
    except (ProtocolViolation, BoundaryError) as exc:
        raised = exc
    seconds = time.process_time() - began
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return raised, seconds, peak


@pytest.mark.slow
@pytest.mark.parametrize("item", [b"[]", b'""', b'{"$set": []}'])
def test_amplification_frame_is_refused_unbuilt(item: bytes) -> None:
    # Unbounded, `[],` × 5.6 million took the judge 5-9 s of CPU and a 692 MiB peak.
    raw = amplification(item)
    assert len(raw) <= MAX_REPLY_BYTES
    raised, seconds, peak = cost(raw)
    assert isinstance(raised, ProtocolViolation) and "too large" in str(raised)
    assert peak < 3 * len(raw), f"peak {peak >> 20} MiB for a {len(raw) >> 20} MiB frame"
    assert seconds < 5.0


def test_an_escaped_backslash_cannot_hide_values_in_a_string() -> None:
    # `"\\"` is a whole string: a counter that took `\"` for an escaped quote would think
    # the millions of `[]` after it are inside a string and let json.loads build them.
    raw = reply([b'"\\\\"'] + [b"[]"] * MAX_REPLY_VALUES + [b'"\\\\"'])
    assert json.loads(HEAD + b'"\\\\"' + TAIL)["value"] == ["\\"]
    raised, _, peak = cost(raw)
    assert isinstance(raised, ProtocolViolation) and "too large" in str(raised)
    assert peak < 3 * len(raw)


def test_separators_inside_strings_are_not_values() -> None:
    # A legitimate 16 MiB text full of `[ { , :` and escaped quotes is one value.
    text = '[{,:\\"' * ((MAX_REPLY_BYTES - 64) // 10)
    raw = json.dumps({"ok": True, "id": 1, "value": encode(text)}).encode()
    assert len(raw) <= MAX_REPLY_BYTES
    raised, _, peak = cost(raw)
    assert raised is None
    assert decode(parse_reply(raw)["value"]) == text
    assert peak < 4 * len(raw)


def test_the_cap_is_exact() -> None:
    under = reply([b"7"] * (MAX_REPLY_VALUES - ENVELOPE_VALUES))
    assert parse_reply(under)["value"] == [7] * (MAX_REPLY_VALUES - ENVELOPE_VALUES)
    with pytest.raises(ProtocolViolation, match="too large"):
        parse_reply(reply([b"7"] * (MAX_REPLY_VALUES - ENVELOPE_VALUES + 1)))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32-be"])
def test_a_reply_json_would_read_as_utf16_or_32_is_refused(encoding: str) -> None:
    # json.loads(bytes) guesses UTF-16/32 (from a BOM, or from NUL bytes, which are ASCII):
    # a frame the value count would not read as json.loads does.
    raw = '{"ok": true, "id": 1, "value": 5}'.encode(encoding)
    assert json.loads(raw)["value"] == 5
    with pytest.raises(ProtocolViolation, match=r"not ASCII|malformed reply"):
        parse_reply(raw)


def test_typical_replies_keep_their_types() -> None:
    value: Any = {(1, "a"): [1.5, float("inf")], "s": {b"x", frozenset({2})}, 3: None}
    raw = json.dumps({"ok": True, "id": 1, "value": encode(value)}).encode()
    assert decode(parse_reply(raw)["value"]) == value


def test_decoding_past_the_deadline_fails_the_check() -> None:
    # The reply came in time, but decoding it ran past the check's deadline: a timeout.
    done = Session(lambda request: {"ok": True, "value": [1, 2]}, left=lambda: 0.0)
    with pytest.raises(BoundaryError, match="timed out"):
        done.value(done.ask({"op": "call"}))
    assert done.incidents and "timed out" in done.incidents[0]
    in_time = Session(lambda request: {"ok": True, "value": [1, 2]}, left=lambda: 1.0)
    assert in_time.value(in_time.ask({"op": "call"})) == [1, 2] and not in_time.incidents
