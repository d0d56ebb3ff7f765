"""The embedded tool handler's finish reason, true to its reply."""

from __future__ import annotations

from benchrig.gateway.embedded import finish_of


def test_tool_calls_without_a_call_is_length_when_the_budget_ran_out() -> None:
    # pi's 11th call on a 2048 window left 1 token: the handler said tool_calls, wrote none
    assert finish_of("tool_calls", called=False, made=1, budget=1) == "length"
    assert finish_of("tool_calls", called=False, made=3, budget=10) == "stop"
    assert finish_of("tool_calls", called=True, made=30, budget=100) == "tool_calls"
    assert finish_of("stop", called=False, made=5, budget=100) == "stop"
