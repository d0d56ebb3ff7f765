"""`benchrig serve` is the gateway: on the real embedded model, the forms agents send (which
gave HTTP 500 behind llama-cpp-python's server) are served, and a streamed request with tools
gets its tool call streamed (it was dropped), as the model writes it (it was sent whole)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from benchrig.gateway.metering import STREAMED_BASIS
from tests.conftest import ROOT
from tests.gateway.helpers import sse_chunks
from tests.gateway.test_chat_front import ACCEPTED

pytestmark = pytest.mark.model

WRITE_FILE = {"type": "function", "function": {
    "name": "write_file", "description": "Write a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                    "content": {"type": "string"}},
                   "required": ["path", "content"]}}}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`benchrig serve` on the embedded model; its base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "serve", "--context-size",
                             "2048", "--threads", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def post(url: str, **body: Any) -> httpx.Response:
    body = {"model": "smollm2", "max_tokens": 16, "temperature": 0, "seed": 1,
            "messages": [{"role": "user", "content": "Say hi"}], **body}
    return httpx.post(f"{url}/chat/completions", json=body, timeout=300, trust_env=False)


@pytest.mark.parametrize("form", sorted(ACCEPTED))
def test_forms_that_gave_500_are_served_streamed_with_usage(served: str, form: str) -> None:
    response = post(served, stream=True, stream_options={"include_usage": True},
                    **ACCEPTED[form])
    assert response.status_code == 200, response.text
    chunks = sse_chunks(response)
    assert chunks[-1] == "[DONE]" and chunks[-2]["choices"] == []
    assert chunks[-2]["usage"]["prompt_tokens"] > 0


def test_a_streamed_request_with_tools_streams_the_models_tool_call(served: str) -> None:
    response = post(served, stream=True, max_tokens=100, tools=[WRITE_FILE], messages=[
        {"role": "system", "content": "You write files with the write_file function."},
        {"role": "user", "content": "Write hello world in python to hello.py using "
                                    "write_file."}])
    assert response.status_code == 200, response.text
    chunks = sse_chunks(response)
    calls = [d["tool_calls"][0] for c in chunks[:-1] for d in [c["choices"][0]["delta"]]
             if d.get("tool_calls")]
    assert calls and calls[0]["function"]["name"] == "write_file" and calls[0]["id"]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"


WRITE_HELLO = [{"role": "system", "content": "You write files with the write_file function."},
               {"role": "user", "content": "Write hello world in python to hello.py using "
                                           "write_file."}]


def test_a_tool_call_streams_from_its_first_token(served: str) -> None:
    """The function-calling handler cannot stream a tool call, so a reply with tools was sent
    whole and its TTFT was the whole call. Now the name leaves once the model has written it
    and the arguments piece by piece as it writes them: the call's TTFT is its first token's,
    and the reply is the handler's own (the same as unstreamed)."""
    calls = f"{served}/benchrig/calls"
    before = len(httpx.get(calls, trust_env=False).json())
    response = post(served, stream=True, max_tokens=100, tools=[WRITE_FILE],
                    messages=WRITE_HELLO)
    assert response.status_code == 200, response.text
    chunks = sse_chunks(response)
    parts = [d["tool_calls"][0] for c in chunks[:-1] for d in [c["choices"][0]["delta"]]
             if d.get("tool_calls")]
    assert len(parts) > 2, parts  # the name, then the arguments in pieces
    assert parts[0]["function"]["name"] == "write_file" and parts[0]["id"]
    streamed = "".join(p["function"].get("arguments") or "" for p in parts)
    (call,) = httpx.get(calls, trust_env=False).json()[before:]
    assert call["ttft_basis"] == STREAMED_BASIS and call["tool_calls"] == ["write_file"]
    assert call["ttft_ms"] < 0.8 * call["wall_ms"], call  # not the whole call
    whole = post(served, max_tokens=100, tools=[WRITE_FILE], messages=WRITE_HELLO).json()
    (called,) = whole["choices"][0]["message"]["tool_calls"]
    assert streamed == called["function"]["arguments"]
    json.loads(streamed)


def test_a_prompt_over_the_window_is_a_400_naming_both(served: str) -> None:
    response = post(served, messages=[{"role": "user", "content": "word " * 3000}])
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "context window is 2048" in message and "nothing was cut" in message


def test_a_tool_prompt_over_the_window_is_a_400_not_a_502(served: str) -> None:
    """The handler's prompt describes the tools too: it can overflow where the plain
    conversation fits (pi's 13th call on a 2048-token window got a 502 gateway error)."""
    long = {"type": "object", "properties": {"path": {"type": "string",
                                                      "description": "the path " * 300}}}
    tool = {**WRITE_FILE, "function": {**WRITE_FILE["function"], "parameters": long}}
    response = post(served, tools=[tool], messages=[
        {"role": "system", "content": "You write files."},
        {"role": "user", "content": "word " * 1500}])
    assert response.status_code == 400, response.text
    assert "does not fit" in response.json()["error"]["message"]
