"""The load client against hostile servers: each failure is a counted error, never a
traceback, and nothing the server says is believed beyond what it sent."""

from __future__ import annotations

import asyncio
from typing import Any

from benchrig.load.measure import chunk_tokens, measured
from benchrig.load.wire import TEXTLESS_TOKENS, Endpoint, Record, stream_chat
from benchrig.local.embedded_server import free_port
from tests.helpers.loopback import Loopback, Reply, sse

PATH = ("POST", "/v1/chat/completions")


def text(content: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}}]}


def usage(completion: int, prompt: int = 5) -> dict[str, Any]:
    return {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


def ask(url: str, max_tokens: int = 16, timeout_s: float = 10.0) -> Record:
    body = {"model": "m", "stream": True, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": "hi"}]}
    return asyncio.run(stream_chat(Endpoint.of(url + "/v1"), body, timeout_s))


def test_a_complete_stream_is_timed_chunk_by_chunk() -> None:
    reply = Reply(sse(text("a"), text("b"), text("c"), usage(3), "[DONE]"),
                  content_type="text/event-stream", pause_s=0.01)
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert record.ok and record.error is None
    assert len(record.chunks) == 3 and record.chunks == sorted(record.chunks)
    assert record.end is not None and record.end >= record.chunks[-1]
    figures = measured(record)
    assert figures.output_tokens == 3 and figures.tokens_source == "server"
    assert len(figures.itl_ms) == 2  # the tokens after the first chunk's


def test_a_dead_server_is_a_connect_error() -> None:
    record = ask(f"http://127.0.0.1:{free_port()}")
    assert not record.ok and record.error_kind == "connect"


def test_a_stream_cut_midway_is_an_error_not_a_result() -> None:
    reply = Reply(sse(text("a"), text("b")), content_type="text/event-stream", complete=False)
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert not record.ok and record.error_kind == "cut"


def test_a_reset_connection_is_an_error() -> None:
    with Loopback({PATH: Reply(reset=True)}) as server:
        record = ask(server.url)
    assert not record.ok and record.error_kind in ("cut", "connect")


def test_a_server_that_never_answers_is_a_timeout() -> None:
    reply = Reply(sse(text("a"), "[DONE]"), content_type="text/event-stream",
                  first_pause_s=3.0)
    with Loopback({PATH: reply}) as server:
        record = ask(server.url, timeout_s=0.3)
    assert not record.ok and record.error_kind == "timeout"


def test_an_error_status_keeps_only_printable_text() -> None:
    reply = Reply((b'{"error": "\x1b[2J\xe2\x80\xaeoverloaded\n fake line"}',), status=503)
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert record.error_kind == "status" and record.error is not None
    assert "\x1b" not in record.error and "\u202e" not in record.error
    assert "\n" not in record.error and "503" in record.error


def test_an_error_event_inside_the_stream_is_printable() -> None:
    reply = Reply(sse(text("a"), {"error": {"message": "boom\x1b]0;owned\x07"}}),
                  content_type="text/event-stream")
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert record.error_kind == "stream" and record.error is not None
    assert "\x1b" not in record.error and "\x07" not in record.error


def test_a_forged_usage_is_not_believed() -> None:
    """The attack: three short chunks with a usage of a billion tokens would make the
    level's throughput a billion tokens/s; the text can hold at most its bytes + margin."""
    reply = Reply(sse(text("a"), text("b"), text("c"), usage(10**9), "[DONE]"),
                  content_type="text/event-stream")
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    figures = measured(record)
    assert figures.output_tokens == 3 and figures.tokens_source == "counted"


def test_a_usage_below_the_chunks_is_not_believed() -> None:
    reply = Reply(sse(text("a"), text("b"), text("c"), usage(1), "[DONE]"),
                  content_type="text/event-stream")
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    counts, source = chunk_tokens(record)
    assert sum(counts) == 3 and source == "counted"


def test_events_one_read_brought_are_one_chunk_spread_over_their_tokens() -> None:
    """A client that reads late finds several writes in one read: they arrived at once as
    far as it can tell, so they are one chunk whose gap is spread over its tokens (not
    three latencies of which two are 0 ms)."""
    burst = b"".join(sse(text("b"), text("c"), text("d")))
    reply = Reply((*sse(text("a")), burst, *sse(usage(4), "[DONE]")),
                  content_type="text/event-stream", pause_s=0.05)
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert record.events == [1, 3] and record.text_events == 4
    figures = measured(record)
    assert figures.output_tokens == 4 and len(figures.itl_ms) == 3
    assert len(set(figures.itl_ms)) == 1 and figures.itl_ms[0] > 0


def test_a_server_that_does_not_stop_is_cut_at_the_budget() -> None:
    """The attack: an endless stream of one-character chunks would hold a list of arrivals
    without bound; more text chunks than max_tokens (+ the margin) ends the request."""
    pieces = sse(*[text("x")] * (16 + TEXTLESS_TOKENS + 50), "[DONE]")
    reply = Reply((b"".join(pieces),), content_type="text/event-stream")
    with Loopback({PATH: reply}) as server:
        record = ask(server.url, max_tokens=16)
    assert record.error_kind == "protocol"
    assert len(record.chunks) <= 16 + TEXTLESS_TOKENS + 1


def test_an_event_without_end_is_refused_at_its_cap() -> None:
    reply = Reply((b"data: " + b"x" * (9 << 20),), content_type="text/event-stream")
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert record.error_kind == "protocol"


def test_a_multi_token_chunk_is_spread_over_its_tokens() -> None:
    """llmperf's and vLLM's ITL fixes: a chunk of k tokens is k latencies of gap/k, not
    one latency of the whole gap."""
    record = Record(chunks=[0.1, 0.2, 0.6], chars=[2, 2, 8], end=0.6, usage_output=8,
                    received_bytes=12)
    counts, source = chunk_tokens(record)
    assert source == "server" and sum(counts) == 8 and counts[2] > counts[1]
    figures = measured(record)
    assert len(figures.itl_ms) == counts[1] + counts[2]
    assert abs(sum(figures.itl_ms) - 500.0) < 1e-6  # the gaps, spread, still sum up
    assert max(figures.itl_ms) < 400.0 / counts[2] + 1e-6


def test_streamed_usage_counts_each_chunk() -> None:
    record = Record(chunks=[0.1, 0.2, 0.3], chars=[1, 1, 1], tokens=[1, 3, 4], end=0.3,
                    usage_output=4, received_bytes=3)
    assert chunk_tokens(record) == ([1, 2, 1], "server")


def test_headers_past_their_cap_are_refused() -> None:
    reply = Reply(sse(text("a"), "[DONE]"), content_type="text/event-stream",
                  headers=(("X-Filler", "a" * (70 << 10)),))
    with Loopback({PATH: reply}) as server:
        record = ask(server.url)
    assert record.error_kind == "protocol" and "headers" in (record.error or "")
