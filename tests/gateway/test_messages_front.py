"""The Anthropic Messages front (`/v1/messages`, Claude Code's API): streamed events per
protocols.md §6 with tool_use blocks, tool_result blocks read back, errors in its shape."""

from __future__ import annotations

import json
from typing import Any

import httpx

from benchrig.gateway.anthropic import parse_request
from tests.gateway.helpers import DONE, WRITE, scripted

TOOL = {"name": "write", "description": "Write a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}


def messages(root: str, **body: Any) -> httpx.Response:
    body = {"model": "claude-x", "max_tokens": 100,
            "messages": [{"role": "user", "content": "hi"}], **body}
    # Claude Code is given the session root (ANTHROPIC_BASE_URL, no /v1) and adds /v1/messages
    return httpx.post(f"{root}/v1/messages", json=body, timeout=30, trust_env=False)


def events(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in response.text.strip().split("\n\n"):
        kind, data = block.split("\n", 1)
        assert kind.startswith("event: ") and data.startswith("data: ")
        payload = json.loads(data[len("data: "):])
        assert payload["type"] == kind[len("event: "):]
        out.append((payload["type"], payload))
    return out


def test_a_streamed_tool_use_in_messages_events() -> None:
    with scripted(WRITE) as (_, session):
        response = messages(session.root, stream=True, tools=[TOOL])
        (call,) = session.calls()
    assert response.status_code == 200
    got = events(response)
    kinds = [k for k, _ in got]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    start = next(e for k, e in got if k == "content_block_start")
    assert start["content_block"] == {"type": "tool_use", "id": "call_0_0", "name": "write",
                                      "input": {}}
    partial = "".join(e["delta"]["partial_json"] for k, e in got
                      if k == "content_block_delta")
    assert json.loads(partial) == {"path": "a.py", "content": "x = 1"}
    assert "content_block_stop" in kinds
    delta = got[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == call.output_tokens > 0
    assert call.front == "anthropic-messages" and call.tool_calls == ("write",)


def test_an_unstreamed_message_with_text() -> None:
    with scripted(DONE) as (_, session):
        reply = messages(session.root).json()
    assert reply["type"] == "message" and reply["stop_reason"] == "end_turn"
    assert reply["content"] == [{"type": "text", "text": "Written."}]
    assert reply["usage"]["input_tokens"] > 0


def test_tool_results_and_system_blocks_reach_the_back_end_as_plain_messages() -> None:
    request = parse_request({"model": "m", "system": [{"type": "text", "text": "Be brief."}],
                             "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "text", "text": "x = 1"}]}]}],
        "tools": [TOOL], "tool_choice": {"type": "any"}})
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "user", "assistant", "tool"]
    assert request.messages[2]["tool_calls"][0]["function"] == {
        "name": "read", "arguments": '{"path":"a"}'}
    assert request.messages[3] == {"role": "tool", "tool_call_id": "t1", "content": "x = 1",
                                   "name": "read"}
    assert request.tool_choice == "required"
    assert request.tools[0]["function"]["parameters"] == TOOL["input_schema"]


def test_what_it_cannot_serve_is_a_400_in_the_messages_error_shape() -> None:
    with scripted(DONE) as (_, session):
        response = messages(session.root, messages=[{"role": "wizard", "content": "x"}])
    assert response.status_code == 400
    error = response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert "role must be user, assistant or system" in error["error"]["message"]
