"""The embedded model (llama-cpp-python, in this process) behind the gateway: one call at a
time (a lock), each paying its own prefill; a call with tools goes through BenchRig's fixed
function-calling handler (benchrig.local.function_calling), streamed as the model writes it
(benchrig.local.tool_stream); a plain call streams."""

from __future__ import annotations

import codecs
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from benchrig.gateway.call import (
    CallContext,
    ChatRequest,
    Done,
    Event,
    RequestError,
    Text,
    ToolCallPart,
)

if TYPE_CHECKING:
    from benchrig.local.tool_stream import ToolStream

SAMPLING = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}
DEFAULT_TEMPERATURE = 0.2
CHAT_FORMAT = "chatml"  # accepts what the front makes of any message; recorded


def plain_messages(messages: tuple[dict[str, Any], ...]) -> list[dict[str, str]]:
    """The conversation for a chat template without tools: a tool result becomes a user
    message, an assistant's tool calls are written out as text."""
    from benchrig.local.function_calling import handler_messages

    out = []
    for message in handler_messages(list(messages)):
        content = message.get("content") or ""
        for call in message.get("tool_calls") or ():
            content += f"\nfunctions.{call['function']['name']}:\n{call['function']['arguments']}"
        out.append({"role": message["role"], "content": content})
    return out


def finish_of(reason: str | None, called: bool, made: int, budget: int) -> str | None:
    """The handler's finish reason, made true to its reply: it says `tool_calls` even when
    the budget ran out before a call was written (seen with 1 token of room left, and pi
    then stopped on a tool-use turn without a tool)."""
    if reason == "tool_calls" and not called:
        return "length" if made >= budget else "stop"
    return reason


def tool_events(stream: ToolStream, budget: int, perf: Callable[[], dict[str, Any]],
                counters: dict[str, Any]) -> Iterator[Event]:
    """A reply with tools as the model writes it (the TTFT of such a call is its first
    token's), then its Done with the handler's counts. A handler's prompt that overflows the
    window (it describes the tools, so it is longer than the plain one; llama-cpp-python
    refuses it with "Requested tokens (N) exceed context window") is a 400 when nothing was
    sent yet; after a part of the reply has left (the handler's next completion, asking for
    another call, no longer fits), the reply ends there as cut by the window (`length`),
    with what the model did process and write."""
    sent = False
    cut: str | None = None
    try:
        for piece in stream:
            sent = True
            if piece.kind == "text":
                yield Text(piece.text)
            elif piece.kind == "call":
                yield ToolCallPart(piece.index, piece.id, piece.text, "")
            else:
                yield ToolCallPart(piece.index, None, None, piece.text)
    except ValueError as exc:
        if "context window" not in str(exc):
            raise
        if not sent:
            raise RequestError(f"with its tools described, the prompt does not fit: {exc} "
                               "(nothing was cut)") from None
        cut = f"the handler's next completion did not fit: {exc}"
    usage = stream.usage()
    figures = perf()
    if cut is None:
        choice = stream.reply["choices"][0]
        message = choice.get("message") or {}
        reason = finish_of(choice.get("finish_reason"), bool(message.get("tool_calls")),
                           int(usage.get("completion_tokens") or 0), budget)
    else:
        reason = "length"
    yield Done(reason, input_tokens=usage.get("prompt_tokens"),
               output_tokens=usage.get("completion_tokens"),
               prefill_ms=figures.get("prompt_ms") or None,
               decode_ms=figures.get("predicted_ms") or None,
               counters={"llama_perf": figures, **counters,
                         "handler": "chatml-function-calling, streamed",
                         **({"cut": cut} if cut else {})})


class EmbeddedBackend:
    """A GGUF (`smollm2` or a path) loaded once; `load_s` is how long that took."""

    name = "embedded"

    def __init__(self, model: str = "smollm2", *, context_size: int = 8192,
                 threads: int | None = None) -> None:
        from benchrig.local.model import default_threads, new_llama, resolve_model

        self.path = resolve_model(model)
        self.alias = model if not model.endswith(".gguf") else self.path.stem
        self.threads = threads or default_threads()
        self.context_size = context_size
        began = time.perf_counter()
        self.llm: Any = new_llama(self.path, n_ctx=context_size, n_threads=self.threads,
                                  n_threads_batch=self.threads, chat_format=CHAT_FORMAT)
        self.load_s = time.perf_counter() - began
        self.lock = threading.Lock()
        # llama_decode asks this between graph nodes: once the gateway stops, a call still
        # generating (its agent killed at a timeout) ends at once, so the model is never
        # freed under it
        self.stopping = False
        import llama_cpp

        self._abort = llama_cpp.ggml_abort_callback(lambda _: self.stopping)
        llama_cpp.llama_set_abort_callback(self.llm.ctx, self._abort, None)

    def model_id(self, requested: str) -> str:
        return self.alias

    def settings(self) -> dict[str, Any]:
        from importlib.metadata import version

        from benchrig.local.function_calling import TOOL_FORMAT_NOTE

        return {"server": "benchrig gateway", "backend": self.name,
                "runtime": "llama-cpp-python", "version": version("llama_cpp_python"),
                "chat_format": CHAT_FORMAT, "tool_chat_format": TOOL_FORMAT_NOTE,
                "threads": self.threads, "context_size": self.context_size,
                "prompt_prefix_reuse": False, "one_call_at_a_time": True,
                "model_path": str(self.path), "alias": self.alias}

    def complete(self, request: ChatRequest, context: CallContext) -> Iterator[Event]:
        if request.non_text_parts:
            raise RequestError(f"the embedded model reads text only: the request holds "
                               f"{request.non_text_parts} image or audio part(s)")
        if request.tool_choice == "required":
            raise RequestError("tool_choice required is not supported by the embedded "
                               "model's function-calling handler (auto or none)")
        waited = time.perf_counter()
        with self.lock:
            queued_ms = (time.perf_counter() - waited) * 1000
            import llama_cpp

            self.llm.reset()  # forget the previous prompt: each call pays its own prefill
            llama_cpp.llama_perf_context_reset(self.llm.ctx)
            if request.seed is not None:
                self.llm.set_seed(request.seed)
            if request.tools and request.tool_choice != "none":
                yield from self._tools(request, queued_ms)
            else:
                yield from self._plain(request, queued_ms)

    def _budget(self, request: ChatRequest, prompt_n: int) -> int:
        room = self.context_size - prompt_n
        if room < 1:
            raise RequestError(f"the prompt is {prompt_n} tokens; the context window is "
                               f"{self.context_size}: it does not fit (nothing was cut)")
        return min(request.max_tokens or room, room)

    def _tools(self, request: ChatRequest, queued_ms: float) -> Iterator[Event]:
        from benchrig.local.model import perf_counters
        from benchrig.local.tool_stream import ToolStream

        prompt_n = self._prompt_tokens(plain_messages(request.messages))
        budget = self._budget(request, prompt_n)
        stream = ToolStream(self.llm, list(request.messages), list(request.tools),
                            request.temperature if request.temperature is not None
                            else DEFAULT_TEMPERATURE, budget, dict(SAMPLING))
        yield from tool_events(stream, budget, lambda: perf_counters(self.llm),
                               {"queued_ms": queued_ms})

    def _prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        from llama_cpp.llama_chat_format import format_chatml

        prompt = format_chatml(messages).prompt
        return len(self.llm.tokenize(prompt.encode("utf-8"), special=True))

    def _plain(self, request: ChatRequest, queued_ms: float) -> Iterator[Event]:
        import llama_cpp
        from llama_cpp.llama_chat_format import format_chatml

        from benchrig.local.model import perf_counters

        formatted = format_chatml(plain_messages(request.messages))
        tokens = self.llm.tokenize(formatted.prompt.encode("utf-8"), special=True)
        budget = self._budget(request, len(tokens))
        stops = [s for s in (*request.stop, formatted.stop) if isinstance(s, str) and s]
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        held, made, finish = "", 0, "length"
        temperature = (request.temperature if request.temperature is not None
                       else DEFAULT_TEMPERATURE)
        for token in self.llm.generate(tokens, temp=temperature, reset=False,
                                       **{**SAMPLING, "top_p": request.top_p or 0.95}):
            if llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token):
                finish = "stop"
                break
            made += 1
            held += decoder.decode(self.llm.detokenize([token]))
            hit = min((held.find(s) for s in stops if s in held), default=-1)
            if hit >= 0:
                if held[:hit]:
                    yield Text(held[:hit])
                held, finish = "", "stop"
                break
            keep = max((len(s) - 1 for s in stops), default=0)  # may start a stop string
            if len(held) > keep:
                cut = len(held) - keep
                yield Text(held[:cut])
                held = held[cut:]
            if made >= budget:
                break
        if held:
            yield Text(held)
        perf = perf_counters(self.llm)
        yield Done(finish, input_tokens=len(tokens), output_tokens=made,
                   prefill_ms=perf.get("prompt_ms") or None,
                   counters={"llama_perf": perf, "queued_ms": queued_ms})

    def close(self) -> None:
        """Stop a call in progress, then free the model; a model whose call will not end
        (it never should) is left to the process's exit rather than freed under it."""
        self.stopping = True
        if self.lock.acquire(timeout=30):
            try:
                self.llm.close()
            finally:
                self.lock.release()
        else:
            _KEPT.append(self.llm)


_KEPT: list[Any] = []  # models not freed because a call still held them
