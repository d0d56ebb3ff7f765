"""The embedded tool handler's finish reason, true to its reply, streamed or cut by the window."""

from __future__ import annotations

from typing import Any

import pytest

from benchrig.gateway.call import Done, RequestError, ToolCallPart
from benchrig.gateway.embedded import finish_of, tool_events


def test_tool_calls_without_a_call_is_length_when_the_budget_ran_out() -> None:
    # pi's 11th call on a 2048 window left 1 token: the handler said tool_calls, wrote none
    assert finish_of("tool_calls", called=False, made=1, budget=1) == "length"
    assert finish_of("tool_calls", called=False, made=3, budget=10) == "stop"
    assert finish_of("tool_calls", called=True, made=30, budget=100) == "tool_calls"
    assert finish_of("stop", called=False, made=5, budget=100) == "stop"


def _overflowing(after: int) -> Any:
    """The stand-in model of tests/local/test_tool_stream.py whose completion number `after`
    (from 0) finds its prompt over the window, as llama-cpp-python says so."""
    from tests.local.test_tool_stream import ARGUMENTS, CALL, END, Model

    class Overflowing(Model):
        made = 0

        def create_completion(self, prompt: str, **kwargs: Any) -> dict[str, Any]:
            self.made += 1
            if self.made > after:
                raise ValueError("Requested tokens (2245) exceed context window of 2048")
            return super().create_completion(prompt, **kwargs)

    return Overflowing(CALL, ARGUMENTS, END)


def test_a_window_overflow_after_part_of_the_reply_left_ends_it_as_length() -> None:
    """Streamed, a reply with tools may have sent its call when the handler's next
    completion (is there another call?) no longer fits: the reply ends there, cut by the
    window, with what the model processed and wrote (a call whose counts were unknown made
    the whole attempt's tokens unknown)."""
    pytest.importorskip("llama_cpp")
    from benchrig.local.tool_stream import ToolStream
    from tests.local.test_tool_stream import ARGUMENTS, CALL, MESSAGES, TOOLS

    stream = ToolStream(_overflowing(2), MESSAGES, TOOLS, 0.0, 100, {})
    events = list(tool_events(stream, 100, dict, {}))
    done = events[-1]
    assert isinstance(done, Done) and done.finish_reason == "length"
    assert (done.input_tokens, done.output_tokens) == (10, len(CALL) + len(ARGUMENTS))
    assert "did not fit" in done.counters["cut"]
    parts = [e for e in events if isinstance(e, ToolCallPart)]
    assert parts[0].name == "write_file"
    assert "".join(p.arguments for p in parts) == "".join(ARGUMENTS)


def test_a_window_overflow_before_anything_left_is_a_400() -> None:
    pytest.importorskip("llama_cpp")
    from benchrig.local.tool_stream import ToolStream
    from tests.local.test_tool_stream import MESSAGES, TOOLS

    stream = ToolStream(_overflowing(0), MESSAGES, TOOLS, 0.0, 100, {})
    with pytest.raises(RequestError, match="does not fit"):
        list(tool_events(stream, 100, dict, {}))
