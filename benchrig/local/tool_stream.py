"""A completion with tools on the embedded model, streamed as the model writes it.

llama-cpp-python's function-calling handler cannot stream a tool call ("Automatic streaming
tool choice is not supported"): asked unstreamed, it returns the whole reply at the end, so a
client's first token was the whole call. Here the handler runs unchanged (as local.tools fixes
it) in a worker thread, and each completion it asks for is watched token by token: an answer's
text and a tool call's arguments leave as they are generated, a call's name once the model
has written it whole (the name is what a tool call's first chunk carries). What leaves is
exactly the handler's reply: each completion's own text is the last word on what was sent.
"""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from benchrig.local.function_calling import ANSWER_PREFIX, Capped, handler_messages

CALL_PREFIX = "functions."


@dataclass(frozen=True)
class Piece:
    """A piece of the reply: answer text, a tool call begun (its id and name), or a piece of
    tool call `index`'s arguments."""

    kind: Literal["text", "call", "arguments"]
    text: str
    index: int = 0
    id: str | None = None


class _Cancelled(Exception):
    """The caller stopped reading (its client hung up): the handler's work ends here."""


@dataclass(frozen=True)
class _End:
    reply: dict[str, Any] | None
    error: Exception | None


def held_back(text: str, stops: list[str]) -> int:
    """How many characters at the end of `text` could begin a stop string: not sent yet,
    since the completion cuts its text there if the stop string completes."""
    for size in range(min(len(text), max((len(s) for s in stops), default=0)), 0, -1):
        if any(s.startswith(text[-size:]) for s in stops):
            return size
    return 0


class _Watched(Capped):
    """Capped (the handler's fixes), with every completion watched as it is generated."""

    def __init__(self, llm: Any, budget: int, names: set[str],
                 send: Callable[[Piece], None], cancel: threading.Event) -> None:
        super().__init__(llm, budget)
        self._names, self._send, self._cancel = names, send, cancel
        self._calls = 0  # tool calls begun

    def _kind(self, prompt: Any) -> str:
        if not isinstance(prompt, str):
            return "choice"
        if prompt.endswith(ANSWER_PREFIX):
            return "text"
        if any(prompt.endswith(f"{CALL_PREFIX}{name}:\n") for name in self._names):
            return "arguments"
        return "choice"  # which function comes next, or the answer, or the end: sent whole

    def create_completion(self, prompt: Any = None, **kwargs: Any) -> Any:
        if self._cancel.is_set():
            raise _Cancelled
        kind = self._kind(prompt)
        stop = kwargs.get("stop") or []
        stops = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)]
        sent = ""
        llm = self._llm
        generate = llm.generate

        def watched(tokens: Any, *args: Any, **options: Any) -> Iterator[int]:
            nonlocal sent
            prompt_tokens, made = list(tokens), []
            for token in generate(tokens, *args, **options):
                if self._cancel.is_set():
                    return  # the completion ends at once, with what it made
                if kind != "choice":
                    made.append(token)
                    # as the completion itself decodes (a character split over tokens
                    # waits for its last byte)
                    text = llm.detokenize(made, prev_tokens=prompt_tokens).decode(
                        "utf-8", errors="ignore")
                    ready = text[:len(text) - held_back(text, stops)]
                    if not any(s in text for s in stops) and ready.startswith(sent) \
                            and len(ready) > len(sent):
                        self._piece(kind, ready[len(sent):])
                        sent = ready
                yield token

        llm.generate = watched  # this instance only, for this completion (the model's lock is held)
        try:
            completion = super().create_completion(prompt, **kwargs)
        finally:
            del llm.generate
        if self._cancel.is_set():
            raise _Cancelled
        text = completion["choices"][0]["text"]
        if kind != "choice" and text.startswith(sent) and len(text) > len(sent):
            self._piece(kind, text[len(sent):])  # what the completion kept after the last
        elif kind == "choice" and text.startswith(CALL_PREFIX):
            name = text[len(CALL_PREFIX):]
            if name in self._names:  # the handler goes on to this function's arguments
                self._send(Piece("call", name, self._calls, f"call_{uuid.uuid4().hex[:24]}"))
                self._calls += 1
        return completion

    def _piece(self, kind: str, text: str) -> None:
        if kind == "text":
            self._send(Piece("text", text))
        else:
            self._send(Piece("arguments", text, self._calls - 1))


class ToolStream:
    """Iterate for the reply's pieces as they are generated; `reply` is then the handler's
    whole reply (its `usage` the sum over its completions). Stopping early (or the caller's
    hang-up) stops the handler within one token and waits for it."""

    def __init__(self, llm: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 temperature: float, budget: int, sampling: dict[str, Any]) -> None:
        self.reply: dict[str, Any] = {}
        self.stopped = threading.Event()  # set once the caller stops reading
        self._args = (llm, messages, tools, temperature, budget, sampling)
        self._watched: _Watched | None = None

    def usage(self) -> dict[str, int | None]:
        """What the model processed and wrote so far (the reply's usage once it is whole;
        after a failure, up to it)."""
        if self._watched is None:
            return {"prompt_tokens": None, "completion_tokens": 0, "total_tokens": 0}
        return self._watched.usage()

    def __iter__(self) -> Iterator[Piece]:
        from llama_cpp.llama_chat_format import chatml_function_calling

        llm, messages, tools, temperature, budget, sampling = self._args
        out: queue.Queue[Piece | _End] = queue.Queue()
        cancel = self.stopped
        names = {str((t.get("function") or {}).get("name")) for t in tools}
        watched = self._watched = _Watched(llm, budget, names, out.put, cancel)

        def work() -> None:
            try:
                reply: dict[str, Any] = chatml_function_calling(
                    llama=watched, messages=handler_messages(messages), tools=tools,
                    tool_choice="auto", temperature=temperature, max_tokens=budget,
                    stream=False, **sampling)
                reply["usage"] = watched.usage()
                out.put(_End(reply, None))
            except Exception as exc:  # handed to the caller's thread, which raises it
                out.put(_End(None, exc))

        worker = threading.Thread(target=work, name="benchrig-tool-stream", daemon=True)
        worker.start()
        try:
            while True:
                item = out.get()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    assert item.reply is not None
                    self.reply = item.reply
                    return
                yield item
        finally:
            cancel.set()
            worker.join()
