"""What llama-cpp-python's function-calling handler sends to the model once BenchRig wraps it
(benchrig/local/function_calling.py): the real handler and grammars, a recording stand-in for the
model's completions (what reaches the model is the point here; the real model runs in
tests/e2e/test_tool_use_model.py)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from benchrig.local.function_calling import tool_completion

# found, not imported: collection runs in every xdist worker, and importing llama_cpp
# (its shared library) there cost each of them ~0.25 s for the one that runs these
pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="llama-cpp-python is not installed")

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]
MESSAGES = [{"role": "system", "content": "Use tools when they help."},
            {"role": "user", "content": 'Say "thank you" & <smile> in Spanish.'}]


class Recorder:
    """Answers each completion with the next scripted text; keeps every request."""

    verbose = False

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.calls: list[dict[str, Any]] = []

    def create_completion(self, prompt: str, **kwargs: Any) -> dict[str, Any]:
        self.calls.append({"prompt": prompt, **kwargs})
        text = self.texts.pop(0)
        return {"id": f"cmpl-{len(self.calls)}", "object": "text_completion", "created": 0,
                "model": "m", "choices": [{"text": text, "index": 0, "logprobs": None,
                                           "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53}}


def test_a_plain_answer_is_free_text_and_the_prompt_is_not_html_escaped() -> None:
    model = Recorder("message", 'Se dice "gracias".')
    reply = tool_completion(model, MESSAGES, TOOLS, 0.0, 16, {})
    assert reply["choices"][0]["message"]["content"] == 'Se dice "gracias".'
    first, answer = model.calls
    for call in model.calls:
        assert 'Say "thank you" & <smile> in Spanish.' in call["prompt"]
        assert "&#34;" not in call["prompt"] and "&amp;" not in call["prompt"]
        assert call["max_tokens"] <= 16  # the handler asks for no limit at all
    assert first["grammar"] is not None  # choosing message or a function stays constrained
    assert answer["prompt"].endswith("message:\n") and answer["grammar"] is None
    assert reply["usage"] == {"prompt_tokens": 50, "completion_tokens": 6,
                              "total_tokens": 56}


def test_a_fixture_result_reaches_the_model() -> None:
    conversation = [*MESSAGES,
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "c0", "type": "function", "function": {
                            "name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
                    {"role": "tool", "tool_call_id": "c0", "name": "get_weather",
                     "content": '{"condition": "snow"}'}]
    model = Recorder("functions.get_weather", '{"city": "Oslo"}', "")
    reply = tool_completion(model, conversation, TOOLS, 0.0, 16, {})
    prompt = model.calls[0]["prompt"]
    assert 'Result of functions.get_weather: {"condition": "snow"}' in prompt
    assert 'functions.get_weather:\n{"city": "Oslo"}' in prompt  # the earlier call, as sent
    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
