"""The stream decoders: every way of splitting a recorded stream yields the same events."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from benchrig.streams import NDJSONDecoder, SSEDecoder, SSEEvent
from tests.conftest import ROOT

STREAMS = ROOT / "tests" / "fixtures" / "streams"
SSE = (STREAMS / "llama-cpp-python.sse").read_bytes()
NDJSON = (STREAMS / "ollama-chat.ndjson").read_bytes()
# Multi-line data, named events, id/retry/unknown fields, a comment, a lone-\r line end and
# multi-byte characters: everything the SSE spec allows that a server might send.
TRICKY_SSE = ("retry: 3000\n: keep-alive\nevent: delta\nid: 7\ndata: {\"a\":\n"
              "data: \"é — 😀\"}\nx-unknown: 1\n\ndata:no-space\r\rdata: [DONE]\n\n"
              ).encode()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def sse_events(chunks: list[bytes]) -> tuple[list[SSEEvent], bytes, int]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    tail, unfinished = decoder.finish()
    return events + tail, unfinished, decoder.comments


def ndjson_lines(chunks: list[bytes]) -> tuple[list[bytes], bytes]:
    decoder = NDJSONDecoder()
    lines = [line for chunk in chunks for line in decoder.feed(chunk)]
    return lines, decoder.finish()


def test_recorded_sse_stream_in_one_piece() -> None:
    events, unfinished, comments = sse_events([SSE])
    assert unfinished == b"" and comments == 1
    assert events[-1] == SSEEvent(b"[DONE]")
    deltas = [json.loads(e.data)["choices"][0]["delta"] for e in events[:-1]]
    assert "".join(d.get("content", "") for d in deltas) == "Bonjour français"


def test_tricky_sse_in_one_piece() -> None:
    events, unfinished, comments = sse_events([TRICKY_SSE])
    assert events == [SSEEvent('{"a":\n"é — 😀"}'.encode(), "delta"),
                      SSEEvent(b"no-space"), SSEEvent(b"[DONE]")]
    assert json.loads(events[0].data) == {"a": "é — 😀"}
    assert (unfinished, comments) == (b"", 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SSE)), max_size=40))
def test_sse_split_anywhere(cuts: list[int]) -> None:
    assert sse_events(split(SSE, cuts)) == sse_events([SSE])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(TRICKY_SSE)), max_size=30))
def test_tricky_sse_split_anywhere(cuts: list[int]) -> None:
    assert sse_events(split(TRICKY_SSE, cuts)) == sse_events([TRICKY_SSE])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SSE)), max_size=40))
def test_crlf_sse_split_anywhere_matches_lf(cuts: list[int]) -> None:
    crlf = SSE.replace(b"\n", b"\r\n")
    assert sse_events(split(crlf, cuts)) == sse_events([SSE])


def test_every_single_split_point_and_byte_by_byte() -> None:
    whole = sse_events([SSE])
    for cut in range(len(SSE) + 1):
        assert sse_events([SSE[:cut], SSE[cut:]]) == whole
    assert sse_events([bytes([b]) for b in SSE]) == whole
    lines = ndjson_lines([NDJSON])
    for cut in range(len(NDJSON) + 1):
        assert ndjson_lines([NDJSON[:cut], NDJSON[cut:]]) == lines


def test_a_cut_sse_stream_reports_the_unfinished_event() -> None:
    cut = SSE[: SSE.index(b"[DONE]") - 3]
    events, unfinished, _ = sse_events([cut])
    assert SSEEvent(b"[DONE]") not in events
    assert unfinished == b"dat"
    half = b'data: {"choices": [{"delta": {"content": "x"'
    assert sse_events([half])[:2] == ([], half)


def test_recorded_ndjson_lines() -> None:
    lines, tail = ndjson_lines([NDJSON])
    assert tail == b""
    parsed = [json.loads(line) for line in lines]
    assert parsed[0]["message"]["thinking"] == "Let me — voilà 思考"
    assert parsed[1]["message"]["content"] == "Hi ✓ 😀"
    assert parsed[-1]["done"] is True and parsed[-1]["eval_count"] == 282


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(NDJSON)), max_size=40))
def test_ndjson_split_anywhere(cuts: list[int]) -> None:
    assert ndjson_lines(split(NDJSON, cuts)) == ndjson_lines([NDJSON])
    crlf = NDJSON.replace(b"\n", b"\r\n")
    assert [json.loads(x) for x in ndjson_lines(split(crlf, cuts))[0]] == [
        json.loads(x) for x in ndjson_lines([NDJSON])[0]]


def test_ndjson_cut_mid_line_leaves_the_partial_line() -> None:
    cut = NDJSON[:-40]
    lines, tail = ndjson_lines([cut])
    assert len(lines) == 3
    assert tail.startswith(b'{"model":"qwen3"') and not tail.endswith(b"}")
    # a blank line between records is not a record, and a \u2028 inside a string is data
    odd = b'{"a":1}\n\n  \n{"b":"x\xe2\x80\xa8y"}\n'
    assert [json.loads(x) for x in ndjson_lines([odd])[0]] == [{"a": 1}, {"b": "x\u2028y"}]
