"""Tool conversations through the HTTP runtimes, against loopback stand-ins following the
documented shapes (Ollama cannot run here): what is sent each turn, what is read back, and
when a case is `unsupported` instead of a 0 %."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchrig.resultio.files import validate
from tests.conftest import cli_call
from tests.helpers.loopback import Loopback, Reply
from tests.helpers.ollama import FINAL, MODEL, tool_reply, tool_routes


def results(folder: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    for data in found:
        validate(data)
    return found


def test_ollama_runs_a_two_step_case(results_dir: Path) -> None:
    replies = [tool_reply(calls=[("lookup_order", {"order_id": "A-1234"})]),
               tool_reply(calls=[("track_package", {"tracking_id": "TRK-5521"})])]
    with Loopback(tool_routes(replies)) as server:
        ran = cli_call("run", "tool-twostep-order", "--driver", "ollama", "--model", MODEL,
                       "--provider", server.url, results_dir=results_dir)
        chats = [b for b in server.posted("/api/chat") if b.get("messages")]
    assert ran.code == 0, ran.stdout + ran.stderr
    (result,) = results(results_dir)
    assert result["result"] == "pass" and result["suite"] == "tool_use"
    first, second = chats
    assert first["tools"][0]["function"]["name"] == "lookup_order"
    assert first["stream"] is False and "tool_calls" not in json.dumps(first["messages"])
    # the second request repeats the model's call with an object, then the fixture result
    call, fed = second["messages"][-2:]
    assert call["tool_calls"] == [{"function": {"name": "lookup_order",
                                                "arguments": {"order_id": "A-1234"}}}]
    assert fed == {"role": "tool", "content": json.dumps(
        {"order_id": "A-1234", "status": "shipped", "tracking_id": "TRK-5521"}),
        "tool_name": "lookup_order"}
    m = result["metrics"]
    # not streamed: wall time per turn, server token counts, no TTFT or decode rate
    assert m["ttft_ms"] is None and m["tokens_per_s"] is None and m["wall_s"] > 0
    assert m["output_tokens"] == 2 * FINAL["eval_count"]
    assert result["settings"]["capabilities"] == ["completion", "tools"]
    assert result["settings"]["placement"] == "cpu"


def test_ollama_arguments_of_the_wrong_type_fail(results_dir: Path) -> None:
    replies = [tool_reply(calls=[("set_thermostat", {"mode": "cool", "temperature_c": 21.0})])]
    with Loopback(tool_routes(replies)) as server:
        ran = cli_call("run", "tool-enum-thermostat", "--driver", "ollama", "--model", MODEL,
                       "--provider", server.url, results_dir=results_dir)
    assert ran.code == 1
    (result,) = results(results_dir)
    assert result["result"] == "fail"
    assert "temperature_c: 21.0 is not of type 'integer'" in result["notes"]


def test_an_ollama_model_without_the_tools_capability_is_unsupported(
        results_dir: Path) -> None:
    with Loopback(tool_routes([], capabilities=("completion",))) as server:
        ran = cli_call("run", "tool-select-weather", "tool-nocall-capital", "--driver",
                       "ollama", "--model", MODEL, "--provider", server.url,
                       results_dir=results_dir)
        chats = [b for b in server.posted("/api/chat") if b.get("messages")]
    assert ran.code == 0, ran.stdout + ran.stderr  # unsupported is neither fail nor error
    assert chats == []  # nothing was asked of the model
    assert [r["result"] for r in results(results_dir)] == ["unsupported", "unsupported"]
    summary = cli_call("summary", str(results_dir), results_dir=results_dir)
    assert "task success n/a (0/0)" in summary.stdout
    assert "unsupported 2" in summary.stdout and "0.0%" not in summary.stdout


def test_an_agent_driver_is_unsupported_without_running(results_dir: Path) -> None:
    ran = cli_call("run", "tool-select-weather", "--driver", "pi", "--model", "m",
                   results_dir=results_dir)
    (result,) = results(results_dir)
    assert result["result"] == "unsupported", ran.stderr
    assert "the pi driver (agent) cannot send tools" in result["notes"]


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion", "choices": [
        {"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 90, "completion_tokens": 12, "total_tokens": 102}}


def test_openai_sends_tools_unstreamed_and_reads_tool_calls(results_dir: Path) -> None:
    replies = [completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_7", "type": "function", "function": {
            "name": "search_documents", "arguments": '{"query": "vacation policy"}'}}]}),
        completion({"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_8", "type": "function", "function": {
                "name": "get_document", "arguments": '{"doc_id": "HR-017"}'}}]})]
    left = list(replies)
    with Loopback({("POST", "/v1/chat/completions"):
                   lambda body: Reply.json(left.pop(0))}) as server:
        ran = cli_call("run", "tool-retrieval-fetch", "--driver", "openai", "--model", "m",
                       "--provider", f"{server.url}/v1", results_dir=results_dir)
        sent = server.posted("/v1/chat/completions")
    assert ran.code == 0, ran.stdout + ran.stderr
    (result,) = results(results_dir)
    assert result["result"] == "pass"
    assert [s["stream"] for s in sent] == [False, False]
    assert all(s["tool_choice"] == "auto" and len(s["tools"]) == 3 for s in sent)
    assert sent[1]["messages"][-2]["tool_calls"][0]["id"] == "call_7"
    assert sent[1]["messages"][-1]["tool_call_id"] == "call_7"
    assert result["metrics"]["input_tokens"] == 180
    assert result["settings"]["stream"] is False and result["settings"]["tool_choice"] == "auto"


def test_a_server_that_rejects_tools_is_unsupported(results_dir: Path) -> None:
    refusal = Reply.json({"error": {"message": "tools are not supported by this model"}}, 400)
    with Loopback({("POST", "/v1/chat/completions"): refusal}) as server:
        cli_call("run", "tool-select-weather", "--driver", "openai", "--model", "m",
                 "--provider", f"{server.url}/v1", results_dir=results_dir)
    (result,) = results(results_dir)
    assert result["result"] == "unsupported"
    assert "refused the request with tools" in result["notes"]


def test_a_server_error_mid_conversation_is_an_error_not_a_verdict(results_dir: Path) -> None:
    replies = [Reply.json(completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {
            "name": "lookup_order", "arguments": '{"order_id": "A-1234"}'}}]})),
        Reply.json({"error": "overloaded"}, 500)]
    left = list(replies)
    with Loopback({("POST", "/v1/chat/completions"): lambda body: left.pop(0)}) as server:
        cli_call("run", "tool-twostep-order", "--driver", "openai", "--model", "m",
                 "--provider", f"{server.url}/v1", results_dir=results_dir)
    (result,) = results(results_dir)
    assert result["result"] == "error" and result["error"]["kind"] == "infra"
    assert result["notes"].startswith("infra: turn 2: HTTP 500")


def test_a_thinking_trace_is_not_the_answer(results_dir: Path) -> None:
    trace = ('<think>I could call {"name": "get_weather", "arguments": {"city": "x"}} '
             "but 12 x 7 = 84.</think>")
    replies = [completion({"role": "assistant", "content": trace + "It is 84."}),
               completion({"role": "assistant", "content": trace + "I cannot say."})]
    for reply, outcome in zip(replies, ("pass", "fail"), strict=True):
        with Loopback({("POST", "/v1/chat/completions"): Reply.json(reply)}) as server:
            cli_call("run", "tool-nocall-arithmetic", "--driver", "openai", "--model", "m",
                     "--provider", f"{server.url}/v1", results_dir=results_dir)
        latest = max(results(results_dir), key=lambda r: r["ended_at"])
        assert latest["result"] == outcome, latest["notes"]
