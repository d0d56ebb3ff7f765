"""The OpenAI Responses front (`/v1/responses`, Codex's API): streamed events with
function_call items, function_call_output read back, stateless by design."""

from __future__ import annotations

import json
from typing import Any

import httpx

from benchrig.gateway.responses import parse_request
from tests.gateway.helpers import DONE, WRITE, scripted

TOOL = {"type": "function", "name": "write", "description": "Write a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}


def respond(base_url: str, **body: Any) -> httpx.Response:
    body = {"model": "gpt-x", "instructions": "Be brief.", "input": "hi", **body}
    return httpx.post(f"{base_url}/responses", json=body, timeout=30, trust_env=False)


def events(response: httpx.Response) -> list[dict[str, Any]]:
    out = []
    for block in response.text.strip().split("\n\n"):
        kind, data = block.split("\n", 1)
        payload = json.loads(data[len("data: "):])
        assert kind == f"event: {payload['type']}"
        out.append(payload)
    return out


def test_a_streamed_function_call_in_responses_events() -> None:
    with scripted(WRITE) as (_, session):
        response = respond(session.base_url, stream=True, tools=[TOOL, {"type": "web_search"}])
        (call,) = session.calls()
    got = events(response)
    kinds = [e["type"] for e in got]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e["sequence_number"] for e in got] == list(range(len(got)))
    added = next(e for e in got if e["type"] == "response.output_item.added")["item"]
    assert (added["type"], added["name"], added["call_id"]) == ("function_call", "write",
                                                                "call_0_0")
    arguments = "".join(e["delta"] for e in got
                        if e["type"] == "response.function_call_arguments.delta")
    assert json.loads(arguments) == {"path": "a.py", "content": "x = 1"}
    final = got[-1]["response"]
    assert final["status"] == "completed" and final["output"][0]["arguments"] == arguments
    assert final["usage"]["output_tokens"] == call.output_tokens > 0
    assert call.front == "openai-responses" and call.tool_calls == ("write",)


def test_an_unstreamed_text_response() -> None:
    with scripted(DONE) as (_, session):
        reply = respond(session.base_url).json()
    assert reply["object"] == "response" and reply["status"] == "completed"
    (item,) = reply["output"]
    assert item["type"] == "message" and item["content"][0]["text"] == "Written."
    assert reply["usage"]["input_tokens"] > 0


def test_function_call_outputs_reach_the_back_end_as_tool_messages() -> None:
    request = parse_request({"model": "m", "instructions": "sys", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "shell",
         "arguments": '{"cmd":"ls"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"}],
        "tools": [TOOL]})
    assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "tool"]
    assert request.messages[2]["tool_calls"][0]["function"]["name"] == "shell"
    assert request.messages[3]["name"] == "shell" and request.messages[3]["content"] == "a.py"


def test_previous_response_id_is_a_400_with_the_reason() -> None:
    with scripted(DONE) as (_, session):
        response = respond(session.base_url, previous_response_id="resp_1")
    assert response.status_code == 400
    assert "send the whole conversation" in response.json()["error"]["message"]
