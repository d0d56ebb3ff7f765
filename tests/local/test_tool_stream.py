"""A reply with tools on the embedded model leaves as the model writes it (local/tool_stream.py):
the real function-calling handler and grammars, a stand-in model that generates scripted
tokens and can wait until the client has seen one (streamed, or it would never see it in
time); the real model runs in tests/gateway/test_serve_gateway.py."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from benchrig.local.tool_stream import Piece, ToolStream, held_back

# found, not imported: collection runs in every xdist worker, and importing llama_cpp
# (its shared library) there cost each of them ~0.25 s for the one that runs these
pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="llama-cpp-python is not installed")

TOOLS = [{"type": "function", "function": {
    "name": "write_file", "description": "Write a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]}}}]
MESSAGES = [{"role": "user", "content": "Write a.txt."}]
CALL = ["functions", ".", "write", "_file", ":"]  # the choice, cut at its stop ":"
ARGUMENTS = ['{"path', '": "', "a", ".txt", '"}']
END = ["<|im_end|>"]


class Model:
    """Generates each completion's scripted tokens (strings) through `self.generate`, as
    llama-cpp-python's create_completion does, and cuts the text at a stop string."""

    verbose = False

    def __init__(self, *scripts: list[str], wait_after: str | None = None) -> None:
        self.scripts = list(scripts)
        self.wait_after = wait_after  # after this token, wait until `seen` is set
        self.seen = threading.Event()
        self.waited_in_time: bool | None = None
        self.generated: list[str] = []

    def generate(self, tokens: list[str], **_: Any) -> Iterator[str]:
        for token in self.scripts.pop(0):
            self.generated.append(token)
            yield token
            if token == self.wait_after:
                self.waited_in_time = self.seen.wait(10)

    def detokenize(self, tokens: list[str], prev_tokens: Any = None) -> bytes:
        return "".join(tokens).encode()

    def create_completion(self, prompt: str, max_tokens: int | None = None,
                          stop: list[str] | None = None, **_: Any) -> dict[str, Any]:
        made: list[str] = []
        text = ""
        for token in self.generate([prompt]):
            made.append(token)
            text = "".join(made)
            hit = [s for s in stop or [] if s in text]
            if hit:
                text = text[:text.index(hit[0])]
                break
            if max_tokens is not None and len(made) >= max_tokens:
                break
        return {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "m",
                "choices": [{"text": text, "index": 0, "logprobs": None,
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": len(made),
                          "total_tokens": 10 + len(made)}}


def stream(model: Model) -> ToolStream:
    return ToolStream(model, MESSAGES, TOOLS, 0.0, 100, {})


def test_the_arguments_leave_while_the_model_writes_them() -> None:
    model = Model(CALL, ARGUMENTS, END, wait_after="a")
    reply = stream(model)
    pieces: list[Piece] = []
    for piece in reply:
        pieces.append(piece)
        if piece.text == "a":
            model.seen.set()  # the model is still writing: it waits for this
    assert model.waited_in_time is True  # seen before the model went on: streamed
    assert pieces[0].kind == "call" and pieces[0].text == "write_file" and pieces[0].id
    assert [p.text for p in pieces[1:]] == ARGUMENTS  # one piece per token
    # exactly the handler's own reply
    (call,) = reply.reply["choices"][0]["message"]["tool_calls"]
    assert call["function"]["arguments"] == "".join(ARGUMENTS)
    json.loads("".join(ARGUMENTS))
    assert reply.reply["usage"]["completion_tokens"] == len(CALL) + len(ARGUMENTS) + len(END)


def test_an_answer_streams_and_a_stop_string_never_leaves() -> None:
    """A plain answer (the handler's `message:` branch) streams as text; what could begin its
    stop string waits, and what the completion cut at it never leaves."""
    model = Model(["message", ":"], ["Hi", " <|", "im_", "end|>", "tail"])
    reply = stream(model)
    pieces = list(reply)
    assert [p.kind for p in pieces] == ["text", "text"]
    assert "".join(p.text for p in pieces) == "Hi " == reply.reply["choices"][0]["message"][
        "content"]


def test_a_client_that_stops_reading_stops_the_model_within_a_token() -> None:
    model = Model(CALL, [*ARGUMENTS, *['"x"'] * 50], END, wait_after=ARGUMENTS[0])
    replying = stream(model)
    model.seen = replying.stopped  # the model writes on once the client has gone
    reading = iter(replying)
    assert next(reading).kind == "call"
    assert next(reading).kind == "arguments"
    reading.close()  # the client hung up: the handler's thread is joined, the model stopped
    assert model.generated == [*CALL, *ARGUMENTS[:2]]  # one token more, then nothing
    assert "generate" not in vars(model)  # the watch is gone from the model


def test_a_failure_in_the_handler_reaches_the_caller() -> None:
    class Overflow(Model):
        def create_completion(self, prompt: str, **kwargs: Any) -> dict[str, Any]:
            raise ValueError("Requested tokens (9000) exceed context window of 2048")

    with pytest.raises(ValueError, match="context window"):
        list(stream(Overflow()))


def test_only_what_could_begin_a_stop_string_is_held() -> None:
    assert held_back("Hi <|", ["<|im_end|>"]) == 2
    assert held_back("Hi there", ["<|im_end|>"]) == 0
    assert held_back("a:", [":"]) == 1
    assert held_back("anything", []) == 0
