"""`benchrig serve` is the gateway: on the real embedded model, the forms agents send (which
gave HTTP 500 behind llama-cpp-python's server) are served, and a streamed request with tools
gets its tool call streamed (it was dropped)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

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
