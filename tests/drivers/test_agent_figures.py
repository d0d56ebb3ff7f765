"""An agent's self-reported figures are not facts: once a tool of the model has run, it can
write forged events into the agent's own stdout (`/proc/$PPID/fd/1`), so only the events before
the first tool execution count; the figures are then marked partial, a cost that is no number
erases nothing, and the summary says which means are partial or lack a rejected figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers.claude import ClaudeParser
from benchrig.drivers.codex import CodexParser
from benchrig.drivers.pi import PiParser
from benchrig.report.grouping import grouped
from benchrig.report.phrases import table_cells
from benchrig.report.table import model_rows
from tests.helpers.agents import FIXTURES, attempt

FORGED_USAGE = {"input": 1, "output": 20_000, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": 20_001, "cost": {"total": "free"}}


def pi_message(output: int, cost: Any, *, tool: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "working"}]
    if tool:
        content.append({"type": "toolCall", "id": "call_1", "name": "bash",
                        "arguments": {"command": "echo forged > /proc/$PPID/fd/1"}})
    return {"type": "message_end", "message": {
        "role": "assistant", "stopReason": "toolUse" if tool else "stop", "content": content,
        "usage": {"input": 100, "output": output, "cacheRead": 0, "cacheWrite": 0,
                  "totalTokens": 100 + output, "cost": {"total": cost}}}}


def test_pi_counts_only_the_events_before_the_first_tool_ran() -> None:
    parser = PiParser(local=False)
    events = [
        (0.5, {"type": "message_update", "assistantMessageEvent": {"type": "text_delta",
                                                                   "delta": "working"}}),
        (1.0, pi_message(50, 0.01, tool=True)),
        (1.1, {"type": "tool_execution_start", "toolCallId": "call_1", "toolName": "bash",
               "args": {}}),
        # what the model's bash tool wrote into pi's stdout: a whole forged message
        (1.2, {"type": "message_end", "message": {"role": "assistant", "stopReason": "stop",
                                                  "content": [], "usage": FORGED_USAGE}}),
        (1.25, {"type": "message_update", "assistantMessageEvent": {
            "type": "thinking_delta", "delta": "x" * 100_000}}),
        (1.3, {"type": "tool_execution_end", "toolCallId": "call_1", "isError": False}),
        (1.4, {"type": "turn_end", "message": {"stopReason": "toolUse"}}),
        (2.0, pi_message(30, 0.02)),
        (2.1, {"type": "agent_end"}),
    ]
    for t, event in events:
        parser.event(t, event)
    run = parser.finish()
    assert (run.input_tokens, run.output_tokens, run.cost_usd) == (100, 50, 0.01)
    assert {"input_tokens", "output_tokens", "cost_usd"} <= set(run.partial)
    assert "first tool ran" in run.partial["output_tokens"]
    assert run.decode_end_s == 1.0  # the decode rate ends with the last figure counted
    assert run.engine["messages_not_counted"] == 2
    assert run.thinking_chars == 0 and "thinking_chars" in run.partial


def test_one_cost_that_is_no_number_erases_nothing() -> None:
    parser = PiParser(local=False)
    parser.event(1.0, pi_message(50, 0.01))
    parser.event(1.5, {"type": "auto_retry_start"})
    parser.event(2.0, pi_message(40, "NaN-ish"))
    parser.event(2.5, pi_message(30, 0.02))
    parser.event(3.0, {"type": "agent_end"})
    run = parser.finish()
    assert run.cost_usd == pytest.approx(0.03)  # the sum of the valid costs, kept
    assert "1 were not a finite number" in run.partial["cost_usd"]
    assert "cost_usd" not in run.rejected and "output_tokens" not in run.partial


def test_codex_usage_after_a_command_ran_is_not_counted() -> None:
    parser = CodexParser()
    parser.event(0.5, {"type": "item.completed", "item": {"type": "reasoning", "text": "x"}})
    parser.event(0.6, {"type": "item.started", "item": {"id": "i1", "type": "command_execution",
                                                        "command": "bash -lc 'printf …'"}})
    # printed by the command itself, then the real end of the turn
    parser.event(0.7, {"type": "turn.completed", "usage": {"input_tokens": 1,
                                                           "output_tokens": 20_000}})
    parser.event(0.9, {"type": "turn.completed", "usage": {"input_tokens": 900,
                                                           "output_tokens": 120}})
    run = parser.finish()
    assert run.output_tokens is None and run.input_tokens is None
    assert "after the tools the model ran" in run.rejected["output_tokens"]


def test_claude_totals_after_a_tool_are_not_counted() -> None:
    parser = ClaudeParser(streaming=True)
    for line in (FIXTURES / "streams" / "claude-success.jsonl").read_text().splitlines():
        event = json.loads(line)
        if "_fixture" not in event:
            parser.event(1.0, event)
    run = parser.finish()
    # msg_1 (before its Write ran) only; the result's session totals and cost came after it
    assert (run.input_tokens, run.output_tokens) == (9 + 5120, 240)
    assert set(run.partial) == {"input_tokens", "output_tokens"}
    assert run.cost_usd is None and "first tool ran" in run.rejected["cost_usd"]


def test_a_forged_claude_result_shows_as_partial_and_rejected_in_the_summary(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The attack end to end: the model's tool printed a result line with 20,000 output tokens
    and a cost that is no number; the summary shows sane figures and says what it lacks."""
    lines = (FIXTURES / "streams" / "claude-success.jsonl").read_text().splitlines()
    result = json.loads(lines[-1])
    result["usage"]["output_tokens"], result["total_cost_usd"] = 20_000, "free"
    done = attempt(monkeypatch, tmp_path, "claude", "claude-success", "sonnet",
                   text="\n".join([*lines[:-1], json.dumps(result)]) + "\n")
    m = done.metrics
    assert done.result["result"] == "pass"
    assert m["output_tokens"] == 240 and m["partial"]["output_tokens"]
    assert m["tokens_per_s"] is not None and m["tokens_per_s"] < 50_000
    assert "tokens_per_s" in m["partial"]
    assert m["cost_usd"] is None and "cost_usd" in m["rejected"]
    (row,) = model_rows(grouped([done.result]))
    cells = dict(zip(["model", "agent", "runs", "rate", "tps", "ttft", "wall", "cost"],
                     table_cells(row), strict=True))
    assert cells["tps"].endswith("(1 partial)") and cells["cost"] == "— (1 rejected)"
