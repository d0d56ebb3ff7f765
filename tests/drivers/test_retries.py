"""Transient server errors (429, 502/503/504, a reset before the first byte) are retried with
capped backoff, recorded in the result, kept out of TTFT, and never counted as the model's
failure."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import DriverError
from benchrig.drivers import httpstream
from benchrig.drivers.ollama import OllamaDriver
from benchrig.drivers.openai import OpenAIDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.report.grouping import grouped
from benchrig.report.render_text import render_table
from benchrig.report.table import model_rows
from benchrig.resultio.files import load_results
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.loopback import Loopback, Reply, ndjson, sequence
from tests.helpers.ollama import ANSWER_LINES, done
from tests.helpers.ollama import request as ollama_request
from tests.helpers.ollama import routes as ollama_routes
from tests.helpers.openai import GOOD, USAGE, chunk, request, stream_reply

OK = stream_reply(chunk({"content": GOOD}), chunk({}, "stop"), chunk(None, usage=USAGE),
                  "[DONE]")
BUSY = Reply.json({"error": {"message": "rate limited"}}, 429)


def openai_run(*replies: Reply, **settings: Any) -> tuple[Any, Loopback]:
    with Loopback({("POST", "/v1/chat/completions"): sequence(*replies)}) as server:
        return OpenAIDriver().run(request(f"{server.url}/v1", **settings)), server


def retries_of(output: Any) -> dict[str, Any]:
    found: dict[str, Any] = output.metrics.engine["retries"]
    return found


@pytest.mark.slow
def test_429_with_retry_after_is_waited_out_and_kept_out_of_ttft() -> None:
    busy = Reply(BUSY.pieces, status=429, headers=(("Retry-After", "1"),))
    output, server = openai_run(busy, OK)
    assert len(server.posted("/v1/chat/completions")) == 2
    assert output.transcript.answer == GOOD
    tries = retries_of(output)
    assert tries["count"] == 1
    assert tries["tries"] == [{"reason": "HTTP 429", "wait_s": 1.0, "retry_after_s": 1.0}]
    # the second's wait is not in the figures: they are of the request that answered, so
    # each is below the wait itself (the bound is the configured wait, not a guess: issue 23)
    wait_s = tries["tries"][0]["wait_s"]
    assert output.metrics.ttft_ms < 1000 * wait_s and output.metrics.wall_s < wait_s


@pytest.mark.slow
def test_429_without_retry_after_backs_off_with_jitter() -> None:
    output, _ = openai_run(BUSY, BUSY, OK)
    tries = retries_of(output)["tries"]
    assert [t["reason"] for t in tries] == ["HTTP 429", "HTTP 429"]
    assert 0.25 <= tries[0]["wait_s"] <= 0.75 and 0.5 <= tries[1]["wait_s"] <= 1.5
    assert all(t["retry_after_s"] is None for t in tries)


def test_a_reset_before_the_first_byte_is_retried() -> None:
    output, server = openai_run(Reply(reset=True), OK)
    assert output.transcript.answer == GOOD
    assert len(server.posted("/v1/chat/completions")) == 2
    (retry,) = retries_of(output)["tries"]
    assert retry["reason"] in ("RemoteProtocolError", "ReadError")


@pytest.mark.slow
def test_ollama_503_then_ok_on_the_first_request_and_on_the_stream() -> None:
    table = ollama_routes(Reply(ndjson(*ANSWER_LINES, done()),
                                content_type="application/x-ndjson"))
    table[("GET", "/api/version")] = sequence(Reply.json({"error": "loading"}, 503),
                                              Reply.json({"version": "0.13.5"}))
    chat = table[("POST", "/api/chat")]
    answers = iter([Reply.json({"error": "busy"}, 503)])
    table[("POST", "/api/chat")] = lambda body: next(answers, None) or chat(body)
    with Loopback(table) as server:
        output = OllamaDriver().run(ollama_request(url=server.url))
    assert output.transcript.answer == GOOD
    assert [t["reason"] for t in retries_of(output)["tries"]] == ["HTTP 503", "HTTP 503"]
    assert output.runtime["version"] == "0.13.5"


def test_an_answer_at_the_first_try_records_no_retries() -> None:
    output, _ = openai_run(OK)
    assert "retries" not in output.metrics.engine


def test_the_time_budget_bounds_the_waits() -> None:
    """A Retry-After longer than the attempt has left is not slept: the attempt ends now."""
    busy = Reply(BUSY.pieces, status=429, headers=(("Retry-After", "5"),))
    timeout_s = 3.0
    began = time.perf_counter()
    with pytest.raises(DriverError) as caught:
        openai_run(busy, OK, timeout_s=timeout_s)
    # sleeping even only until the deadline would take all of timeout_s (issue 23: no guess)
    assert time.perf_counter() - began < timeout_s
    assert caught.value.kind == "infra" and "HTTP 429" in caught.value.message


def test_a_server_failing_every_time_is_an_infra_error_outside_the_pass_rate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpstream, "BACKOFF_BASE_S", 0.01)  # the same path, shorter waits
    task = load_task(TASKS / "lru-cache.md")
    settings = settings_for(task, Overrides())
    with Loopback({("POST", "/v1/chat/completions"): Reply.json({"error": "down"}, 503)}
                  ) as server:
        failed = run_attempt(task, "m", OpenAIDriver(), f"{server.url}/v1", settings,
                             tmp_path).result
        assert len(server.posted("/v1/chat/completions")) == 1 + httpstream.RETRIES
    assert failed["result"] == "error" and failed["error"]["kind"] == "infra"
    assert "HTTP 503" in failed["error"]["message"] and "after 4 retries" in (
        failed["error"]["message"])
    retries = failed["metrics"]["engine"]["retries"]
    assert retries["count"] == 4 and [t["reason"] for t in retries["tries"]] == ["HTTP 503"] * 4
    with Loopback({("POST", "/v1/chat/completions"): stream_reply(
            chunk({"content": GOOD}), chunk({}, "stop"), "[DONE]")}) as server:
        passed = run_attempt(task, "m", OpenAIDriver(), f"{server.url}/v1", settings,
                             tmp_path).result
    assert passed["result"] == "pass"
    (row,) = model_rows(grouped(load_results([tmp_path]).results))
    assert (row.pass_rate, row.scored, row.errors) == (1.0, 1, 1)
    assert "100% (1/1), 1 error" in render_table([row])
