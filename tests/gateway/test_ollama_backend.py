"""The Ollama back end (native `/api/chat`, NDJSON) behind the gateway, on the recorded
Ollama stand-in: streamed text, thinking and whole tool calls forwarded to any front, every
call metered with Ollama's own counters; a broken or refusing Ollama is an error, not a
reply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from benchrig.gateway import Gateway, GatewaySpec, Session
from benchrig.gateway.ollama_backend import OllamaBackend
from tests.gateway.helpers import chat, sse_chunks
from tests.helpers.loopback import Loopback, Reply, ndjson
from tests.helpers.ollama import ANSWER_LINES, FINAL, GOOD, MODEL, THINKING, done, tool_reply


@contextmanager
def through(routes: dict[tuple[str, str], Any]) -> Iterator[tuple[Loopback, Session]]:
    with Loopback(routes) as ollama, Gateway(OllamaBackend(ollama.url, model=MODEL)) as gw:
        yield ollama, gw.open_session("test")


def test_a_streamed_answer_metered_with_ollamas_counters() -> None:
    stream = Reply(ndjson(*ANSWER_LINES, done()), content_type="application/x-ndjson")
    with through({("POST", "/api/chat"): stream}) as (ollama, session):
        response = chat(session.base_url, stream=True, max_tokens=300, temperature=0.5)
        (call,) = session.calls()
        (sent,) = ollama.posted("/api/chat")
    assert response.status_code == 200
    chunks = [c for c in sse_chunks(response) if c != "[DONE]"]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks
                   if c.get("choices"))
    assert text == GOOD
    assert (call.input_tokens, call.output_tokens, call.tokens_source) == (
        FINAL["prompt_eval_count"], FINAL["eval_count"], "server")
    assert call.thinking_chars == len("".join(THINKING))
    assert call.backend == "ollama" and call.status == "ok" and call.finish_reason == "stop"
    assert call.counters["eval_duration"] == FINAL["eval_duration"]  # raw, as Ollama sent
    assert sent["stream"] is True and sent["model"] == MODEL
    assert sent["options"] == {"num_predict": 300, "temperature": 0.5}


def test_a_gemini_function_call_round_trip_through_ollama() -> None:
    reply = tool_reply(calls=[("write", {"path": "a.py", "content": "x = 1"})])
    with through({("POST", "/api/chat"): Reply.json(reply)}) as (ollama, session):
        body = {"contents": [
            {"role": "user", "parts": [{"text": "write a.py"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {
                "output": "none"}}}]}],
            "tools": [{"functionDeclarations": [{"name": "write", "parameters": {
                "type": "OBJECT", "properties": {"path": {"type": "STRING"}}}}]}]}
        response = httpx.post(f"{session.root}/v1beta/models/{MODEL}:generateContent",
                              json=body, timeout=30, trust_env=False)
        (call,) = session.calls()
        (sent,) = ollama.posted("/api/chat")
    assert response.status_code == 200, response.text
    (part,) = response.json()["candidates"][0]["content"]["parts"]
    assert part == {"functionCall": {"name": "write", "args": {"path": "a.py",
                                                               "content": "x = 1"}}}
    assert call.tool_calls == ("write",) and call.finish_reason == "tool_calls"
    user, model, tool = sent["messages"]
    assert user == {"role": "user", "content": "write a.py"}
    assert model["tool_calls"] == [{"function": {"name": "ls", "arguments": {}}}]
    assert tool == {"role": "tool", "content": json.dumps({"output": "none"},
                                                          separators=(",", ":")),
                    "tool_name": "ls"}
    assert sent["tools"][0]["function"]["parameters"]["properties"]["path"]["type"] == "string"


def test_an_ollama_error_line_mid_stream_ends_the_stream_with_an_error() -> None:
    broken = Reply(ndjson(ANSWER_LINES[3], {"error": "model runner has crashed"}),
                   content_type="application/x-ndjson")
    with through({("POST", "/api/chat"): broken}) as (_, session):
        response = chat(session.base_url, stream=True)
        (call,) = session.calls()
    assert "model runner has crashed" in response.text and "[DONE]" not in response.text
    assert call.status.startswith("back end failed")


def test_a_missing_model_is_a_400_and_a_cut_stream_a_502() -> None:
    missing = Reply.json({"error": "model 'nope' not found"}, status=404)
    cut = Reply(ndjson(*ANSWER_LINES[:2]), content_type="application/x-ndjson")
    with through({("POST", "/api/chat"): missing}) as (_, session):
        refused = chat(session.base_url)
    with through({("POST", "/api/chat"): cut}) as (_, session):
        broken = chat(session.base_url)
    assert refused.status_code == 400 and "not found" in refused.text
    assert broken.status_code == 502 and "done line" in broken.text


def test_ollama_is_asked_for_the_runs_model_even_when_it_is_smollm2() -> None:
    """Ollama's library has a smollm2: a run naming it asks Ollama for it, never for
    whatever the agent's request names (the embedded model's name chooses the embedded model
    only where the embedded back end runs)."""
    stream = Reply(ndjson(*ANSWER_LINES, done()), content_type="application/x-ndjson")
    with Loopback({("POST", "/api/chat"): stream}) as ollama, \
            Gateway(GatewaySpec(backend="ollama", model="smollm2",
                                base_url=ollama.url).build()) as gateway:
        session = gateway.open_session("test")
        chat(session.base_url, model="what-the-agent-asked", stream=True)
        (sent,) = ollama.posted("/api/chat")
        (call,) = session.calls()
    assert sent["model"] == call.model == "smollm2"
