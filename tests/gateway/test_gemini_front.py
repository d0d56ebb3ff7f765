"""The Gemini front (`…/v1beta/models/<model>:generateContent` and `:streamGenerateContent`,
Gemini CLI's API): recorded request shapes read into chat, replies as
GenerateContentResponse (SSE with alt=sse, a JSON array without), errors in its shape."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from benchrig.gateway.call import Done, Text, ToolCallPart
from benchrig.gateway.gemini_front import GeminiWriter, json_schema, parse_request
from tests.gateway.helpers import DONE, WRITE, scripted

USER = [{"role": "user", "parts": [{"text": "hi"}]}]
DECLARATION = {"name": "write", "description": "Write a file", "parametersJsonSchema": {
    "type": "object", "properties": {"path": {"type": "string"}}}}
# Gemini CLI 0.61's second request (texts shortened): its function call carries an id and a
# thoughtSignature; the answer names the call by id
RECORDED = {
    "contents": [
        {"parts": [{"text": "<session_context>…</session_context>"},
                   {"text": "Write solution.py"}], "role": "user"},
        {"parts": [{"functionCall": {"id": "write_file_1796145855116_0", "args": {
            "file_path": "solution.py", "content": "print(1)\n"}, "name": "write_file"},
            "thoughtSignature": "skip_thought_signature_validator"}], "role": "model"},
        {"parts": [{"functionResponse": {"name": "write_file", "response": {
            "output": "Successfully created solution.py"},
            "id": "write_file_1796145855116_0"}}], "role": "user"}],
    "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}], "role": "user"},
    "tools": [{"functionDeclarations": [{**DECLARATION, "name": "write_file"}]}],
    "generationConfig": {"temperature": 1, "topP": 0.95, "topK": 64,
                         "thinkingConfig": {"includeThoughts": True}}}


def generate(root: str, method: str = "streamGenerateContent", query: str = "?alt=sse",
             body: Any = None) -> httpx.Response:
    # Gemini CLI is given the session root (GOOGLE_GEMINI_BASE_URL) and adds /v1beta/models/…
    if body is None:
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                "tools": [{"functionDeclarations": [DECLARATION]}]}
    return httpx.post(f"{root}/v1beta/models/gemini-2.5-pro:{method}{query}",
                      content=body if isinstance(body, bytes) else json.dumps(body),
                      headers={"content-type": "application/json"}, timeout=30,
                      trust_env=False)


def sse(response: httpx.Response) -> list[dict[str, Any]]:
    blocks = [b for b in response.text.replace("\r\n", "\n").split("\n\n") if b]
    assert all(b.startswith("data: ") for b in blocks), response.text
    return [json.loads(b[len("data: "):]) for b in blocks]


def test_a_streamed_function_call_as_sse_metered() -> None:
    with scripted(WRITE) as (_, session):
        response = generate(session.root)
        (call,) = session.calls()
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    *_, last = sse(response)
    candidate = last["candidates"][0]
    assert candidate["content"]["role"] == "model"
    assert candidate["content"]["parts"] == [{"functionCall": {
        "name": "write", "args": {"path": "a.py", "content": "x = 1"}}}]
    assert candidate["finishReason"] == "STOP"
    usage = last["usageMetadata"]
    assert (usage["promptTokenCount"], usage["candidatesTokenCount"]) == (
        call.input_tokens, call.output_tokens)
    assert usage["totalTokenCount"] == call.input_tokens + call.output_tokens
    assert call.front == "gemini" and call.tool_calls == ("write",) and call.status == "ok"


def test_a_whole_reply_and_a_json_array_stream() -> None:
    with scripted(DONE, DONE) as (_, session):
        whole = generate(session.root, "generateContent", "")
        array = generate(session.root, "streamGenerateContent", "")
        calls = session.calls()
    assert whole.status_code == 200 and array.status_code == 200
    reply = whole.json()
    assert reply["candidates"][0]["content"]["parts"] == [{"text": "Written."}]
    assert reply["candidates"][0]["finishReason"] == "STOP"
    assert reply["usageMetadata"]["candidatesTokenCount"] == calls[0].output_tokens
    chunks = array.json()  # without alt=sse: one JSON array, written as it grows
    assert isinstance(chunks, list) and chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "".join(p["text"] for c in chunks for p in c["candidates"][0]["content"]["parts"]
                   ) == "Written."
    assert [c.stream for c in calls] == [False, True]


def test_the_cli_s_recorded_conversation_reads_as_chat() -> None:
    request = parse_request(RECORDED, "gemini-2.5-pro", stream=True)
    system, user, assistant, tool = request.messages
    assert system == {"role": "system", "content": "You are Gemini CLI."}
    assert user == {"role": "user", "content": "<session_context>…</session_context>"
                    "Write solution.py"}
    (call,) = assistant["tool_calls"]
    assert call["id"] == "write_file_1796145855116_0"
    assert json.loads(call["function"]["arguments"])["file_path"] == "solution.py"
    assert tool["role"] == "tool" and tool["tool_call_id"] == call["id"]
    assert tool["name"] == "write_file" and "Successfully" in tool["content"]
    assert request.tools[0]["function"]["parameters"]["type"] == "object"
    assert (request.temperature, request.top_p, request.stream) == (1.0, 0.95, True)


def test_max_output_tokens_and_max_tokens_finish() -> None:
    request = parse_request({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                             "generationConfig": {"maxOutputTokens": 5}})
    assert request.max_tokens == 5
    writer = GeminiWriter(request, "m")
    writer.event(Text("abc"))
    writer.event(Done("length", input_tokens=3, output_tokens=5))
    reply = writer.whole()
    assert reply["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert reply["usageMetadata"] == {"promptTokenCount": 3, "candidatesTokenCount": 5,
                                      "totalTokenCount": 8}


def test_a_model_s_broken_arguments_stay_a_function_call() -> None:
    writer = GeminiWriter(parse_request({"contents": USER}), "m")
    writer.event(ToolCallPart(0, "c", "write"))
    writer.event(ToolCallPart(0, arguments='{"path": "a.py", '))  # cut off by max tokens
    writer.event(Done("length"))
    (part,) = writer.whole()["candidates"][0]["content"]["parts"]
    assert part == {"functionCall": {"name": "write", "args": {"_unparsed":
                                                               '{"path": "a.py", '}}}


def test_openapi_parameters_become_json_schema_property_names_kept() -> None:
    schema = {"type": "OBJECT", "properties": {
        "type": {"type": "STRING", "enum": ["a"]},  # a property named `type`
        "items": {"type": "ARRAY", "items": {"type": "INTEGER"}}}, "required": ["type"]}
    assert json_schema(schema) == {"type": "object", "properties": {
        "type": {"type": "string", "enum": ["a"]},
        "items": {"type": "array", "items": {"type": "integer"}}}, "required": ["type"]}


HOSTILE = {
    "not json": b"{contents",
    "a list body": [1],
    "no contents": {},
    "contents a number": {"contents": 3},
    "a part that is a string": {"contents": [{"role": "user", "parts": ["hi"]}]},
    "a foreign role": {"contents": [{"role": "system", "parts": [{"text": "x"}]}]},
    "args a list": {"contents": [{"role": "model", "parts": [
        {"functionCall": {"name": "f", "args": [1]}}]}]},
    "a function call without a name": {"contents": [{"role": "model", "parts": [
        {"functionCall": {"args": {}}}]}]},
    "a nameless answer": {"contents": [{"role": "user", "parts": [
        {"functionResponse": {"response": {}}}]}]},
    "a hosted tool": {"contents": USER, "tools": [{"googleSearch": {}}]},
    "a declaration without a name": {"contents": USER, "tools": [
        {"functionDeclarations": [{"description": "x"}]}]},
    "two candidates": {"contents": USER, "generationConfig": {"candidateCount": 2}},
    "max tokens a string": {"contents": USER, "generationConfig": {"maxOutputTokens": "9"}},
    "temperature a string": {"contents": USER, "generationConfig": {"temperature": "hot"}},
    "generationConfig a list": {"contents": USER, "generationConfig": []},
    "declarations a number": {"contents": USER, "tools": [{"functionDeclarations": 5}]},
    "stop sequences a number": {"contents": USER, "generationConfig": {"stopSequences": 7}},
    "a numeric mode": {"contents": USER, "toolConfig": {"functionCallingConfig": {"mode": 5}}},
    "a seed of text": {"contents": USER, "generationConfig": {"seed": "x"}},
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_what_cannot_be_served_is_a_400_in_gemini_s_shape(body: Any) -> None:
    with scripted(DONE) as (_, session):
        response = generate(session.root, body=body)
        assert session.calls() == ()  # refused before any model call
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert isinstance(error["message"], str) and error["message"]


def test_an_unserved_method_is_a_404_in_gemini_s_shape() -> None:
    with scripted(DONE) as (_, session):
        response = generate(session.root, "embedContent", "")
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"


# a body that trips a front's reader in a way it did not foresee: still a 400 with the
# reason, in that front's shape, never a dropped connection (a client retries those)
UNFORESEEN = {"/v1/messages": {"model": "m", "max_tokens": 5, "tools": 5,
                               "messages": [{"role": "user", "content": "hi"}]},
              "/v1/chat/completions": {"model": "m", "stop": 5, "messages": [
                  {"role": "user", "content": "hi"}]},
              "/v1/responses": {"model": "m", "input": "hi", "tools": 5}}


@pytest.mark.parametrize("path", UNFORESEEN, ids=UNFORESEEN.keys())
def test_an_unforeseen_body_is_a_400_on_every_front(path: str) -> None:
    with scripted(DONE) as (_, session):
        response = httpx.post(f"{session.root}{path}", json=UNFORESEEN[path], timeout=30,
                              trust_env=False)
    assert response.status_code == 400, response.text
    assert "error" in response.json()


def test_a_json_array_stream_cut_by_a_failure_is_still_one_json_array() -> None:
    writer = GeminiWriter(parse_request({"contents": USER}), "m", sse=False)
    body = writer.start() + writer.event(Text("ab")) + writer.stream_error("back end died")
    *chunks, last = json.loads(body)
    assert chunks[0]["candidates"][0]["content"]["parts"] == [{"text": "ab"}]
    assert last == {"error": {"code": 502, "message": "back end died",
                              "status": "UNAVAILABLE"}}
    empty = GeminiWriter(parse_request({"contents": USER}), "m", sse=False)
    assert json.loads(empty.start() + empty.stream_error("x"))[0]["error"]["code"] == 502
