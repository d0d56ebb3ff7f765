"""The OpenAI Chat Completions front: streamed tool calls in protocols.md §6's shape, the
forms agents send, and a 400 with the reason (never a 500) for what it cannot serve."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from benchrig.gateway.call import RequestError
from benchrig.gateway.chat import parse_request
from tests.gateway.helpers import DONE, WRITE, chat, scripted, sse_chunks

TOOL = {"type": "function", "function": {"name": "write", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}}}}


def test_a_streamed_request_with_tools_gets_streamed_tool_calls_and_a_usage_chunk() -> None:
    with scripted(WRITE) as (_, session):
        response = chat(session.base_url, stream=True, tools=[TOOL],
                        stream_options={"include_usage": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = sse_chunks(response)
    assert chunks[-1] == "[DONE]"
    deltas = [c["choices"][0]["delta"] for c in chunks[:-2]]
    assert deltas[0] == {"role": "assistant", "content": None}
    head = deltas[1]["tool_calls"][0]
    assert head == {"index": 0, "id": "call_0_0", "type": "function",
                    "function": {"name": "write", "arguments": ""}}
    pieces = [d["tool_calls"][0] for d in deltas[2:] if d.get("tool_calls")]
    assert all(set(p) == {"index", "function"} for p in pieces)  # id and name once
    arguments = "".join(p["function"]["arguments"] for p in pieces)
    assert arguments == '{"path": "a.py", "content": "x = 1"}'
    finish = chunks[-3]["choices"][0]
    assert (finish["delta"], finish["finish_reason"]) == ({}, "tool_calls")
    usage = chunks[-2]
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] > 0
    assert all(c["usage"] is None for c in chunks[:-2])  # every other chunk: usage null


def test_no_usage_chunk_unless_asked() -> None:
    with scripted(DONE) as (_, session):
        chunks = sse_chunks(chat(session.base_url, stream=True))
    assert chunks[-1] == "[DONE]" and chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in c for c in chunks[:-1])
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-1]) \
        == "Written."


def test_an_unstreamed_request_gets_the_tool_call_whole() -> None:
    with scripted(WRITE) as (_, session):
        reply = chat(session.base_url, tools=[TOOL]).json()
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["function"] == {"name": "write",
                                "arguments": '{"path": "a.py", "content": "x = 1"}'}
    assert reply["usage"]["prompt_tokens"] > 0


# The forms that gave HTTP 500 behind llama-cpp-python's server, each as an agent sends it.
ACCEPTED: dict[str, dict[str, Any]] = {
    "tool without parameters": {"tools": [{"type": "function", "function": {"name": "ls"}}]},
    "content as a list of text parts": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}]},
    "content null beside tool_calls": {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"}]},
    "developer role": {"messages": [{"role": "developer", "content": "Be brief."},
                                    {"role": "user", "content": "hi"}]},
}


@pytest.mark.parametrize("form", sorted(ACCEPTED))
@pytest.mark.parametrize("stream", [False, True])
def test_forms_agents_send_are_accepted(form: str, stream: bool) -> None:
    with scripted(DONE) as (_, session):
        response = chat(session.base_url, stream=stream, **ACCEPTED[form])
    assert response.status_code == 200, response.text


def test_the_forms_reach_the_back_end_as_plain_messages() -> None:
    forms = [ACCEPTED[name]["messages"] for name in (
        "developer role", "content null beside tool_calls", "content as a list of text parts")]
    request = parse_request({"model": "m", "tools": ACCEPTED["tool without parameters"]["tools"],
                             "messages": [m for form in forms for m in form]})
    assert [m["role"] for m in request.messages] == ["system", "user", "user", "assistant",
                                                     "tool", "user"]
    assert request.messages[3]["content"] == "" and request.messages[4]["name"] == "ls"
    assert request.messages[5]["content"] == "Hi there"
    assert request.tools[0]["function"]["parameters"] == {"type": "object", "properties": {}}


REFUSED: dict[str, tuple[Any, str]] = {
    "not JSON": (b"{nope", "not JSON"),
    "not an object": ([1, 2], "JSON object"),
    "no messages": ({"model": "m"}, "messages must be a non-empty list"),
    "unknown role": ({"messages": [{"role": "wizard", "content": "x"}]}, "role 'wizard'"),
    "bad content": ({"messages": [{"role": "user", "content": 7}]}, "content must be"),
    "two choices": ({"n": 2, "messages": [{"role": "user", "content": "x"}]}, "n must be 1"),
    "tool without a name": ({"tools": [{"type": "function", "function": {}}],
                             "messages": [{"role": "user", "content": "x"}]}, "tools[0]"),
    "max_tokens as text": ({"max_tokens": "ten", "messages": [{"role": "user",
                                                               "content": "x"}]}, "max_tokens"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_it_cannot_serve_is_a_400_with_the_reason(case: str) -> None:
    body, reason = REFUSED[case]
    with scripted(DONE) as (_, session):
        content = body if isinstance(body, bytes) else __import__("json").dumps(body).encode()
        response = httpx.post(f"{session.base_url}/chat/completions", content=content,
                              timeout=30, trust_env=False)
    assert response.status_code == 400
    assert reason in response.json()["error"]["message"]


def test_a_request_error_raised_by_the_back_end_is_a_400_even_when_streamed() -> None:
    with scripted(DONE) as (_, session):
        response = chat(session.base_url, stream=True, tool_choice="required")
    assert response.status_code == 400
    assert "tool_choice required" in response.json()["error"]["message"]
    (call,) = session.calls()
    assert call.status.startswith("refused")


def test_parse_refuses_a_non_object_body() -> None:
    with pytest.raises(RequestError):
        parse_request("text")
