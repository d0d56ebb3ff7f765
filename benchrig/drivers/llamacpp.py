"""Embedded llama.cpp (llama-cpp-python), in process and streaming; `smollm2` is bundled."""

from __future__ import annotations

import atexit
import codecs
import contextlib
import importlib.util
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchrig.core.deadline import Deadline
from benchrig.core.errors import DriverError, UsageError
from benchrig.core.measurements import Metrics
from benchrig.core.settings import Settings
from benchrig.core.toolcase import ToolReply
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.base import DriverRequest, Progress
from benchrig.drivers.toolreply import tool_reply
from benchrig.haystack import TokenCounter
from benchrig.local.memory import KV_SOURCE, kv_cache_bytes, rss_bytes, trained_context
from benchrig.local.model import (
    INSTALL_HINT,
    default_threads,
    new_llama,
    perf_counters,
    resolve_model,
)
from benchrig.metrics import StreamCollector

# llama-cpp-python's create_chat_completion defaults, made explicit and recorded.
SAMPLING = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}
STOP_WINDOW = 64

_LOADED: dict[tuple[str, int, int], Any] = {}
# Held while an attempt uses the loaded model (never while one loads: a load cannot be cut),
# so the model is not freed under a decode; once the process exits, no attempt uses one.
_IN_USE = threading.RLock()
_EXITING = threading.Event()
UNLOAD_WAIT_S = 0.5  # an abandoned attempt's decode ends at its abort callback's next call


def _load(path: Path, n_ctx: int, threads: int) -> tuple[Any, float | None]:
    """A Llama for (file, context, threads), loaded once per process; (llm, load seconds)."""
    key = (str(path), n_ctx, threads)
    if key in _LOADED:
        return _LOADED[key], None
    began = time.perf_counter()  # the import is part of the load: it happens once, here
    llm = new_llama(path, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads)
    with _IN_USE:  # kept only while the process is not exiting (`unload` reads the cache)
        if _EXITING.is_set():
            llm.close()
            raise DriverError("infra", "BenchRig is exiting: its model is closed")
        _LOADED.clear()  # keep one model in memory at a time
        _LOADED[key] = llm
    return llm, time.perf_counter() - began


@contextlib.contextmanager
def _in_use() -> Iterator[None]:
    """Around every use of a loaded model: `unload` waits for it, and after the process's
    exit has closed the model no attempt left running touches it (it fails instead)."""
    with _IN_USE:
        if _EXITING.is_set():
            raise DriverError("infra", "BenchRig is exiting: its model is closed")
        yield


def unload(wait_s: float = UNLOAD_WAIT_S) -> None:
    """Close the process's loaded model and forget it. A model left to the interpreter's
    teardown is finalized after llama_cpp's modules are cleared, and its __del__ prints
    "Exception ignored ... 'NoneType' object is not callable". One an attempt still decodes
    with past `wait_s` (abandoned at Ctrl-C) is left to the process's end rather than freed
    under it."""
    if not _IN_USE.acquire(timeout=wait_s):
        return
    try:
        for llm in list(_LOADED.values()):
            llm.close()
        _LOADED.clear()
    finally:
        _IN_USE.release()


def _at_exit() -> None:
    """The process is ending: no attempt uses a model from now on, the loaded one is closed
    (a second Ctrl-C while it waits ends the wait, not with a traceback)."""
    _EXITING.set()
    with contextlib.suppress(KeyboardInterrupt):
        unload()


atexit.register(_at_exit)  # atexit runs before the modules are torn down


class AbortAtDeadline:
    """llama.cpp's abort callback for one attempt: llama_decode asks it between the nodes of
    its graph (a few ms apart even in a long prefill, where the driver's own code does not
    run), and stops (returns 2) once the deadline has passed. Set for the attempt only."""

    def __init__(self, llm: Any, deadline: Deadline) -> None:
        import llama_cpp

        self.llm, self.deadline, self.fired = llm, deadline, False
        self.interrupted = False  # Ctrl-C landed inside the callback (see _unraisable)
        self.callback = llama_cpp.ggml_abort_callback(self._ask)  # kept alive while set
        _hook_unraisable()

    def _ask(self, _: Any) -> bool:
        if self.deadline.expired:  # read live: a stopped attempt's deadline ends early
            self.fired = True
        return self.fired or self.interrupted

    def __enter__(self) -> AbortAtDeadline:
        import llama_cpp

        llama_cpp.llama_set_abort_callback(self.llm.ctx, self.callback, None)
        return self

    def __exit__(self, *_: object) -> None:
        import llama_cpp

        # the model stays loaded for the next attempt: it must not call a freed callback
        # (a function type called with no argument is its NULL pointer)
        llama_cpp.llama_set_abort_callback(self.llm.ctx, llama_cpp.ggml_abort_callback(), None)
        if self.interrupted:  # the Ctrl-C the callback could not raise, now that it is out
            raise KeyboardInterrupt


def _hook_unraisable() -> None:
    """Ctrl-C (an attempt run in the main thread, as scripts/runner.py does) arriving while
    llama.cpp runs the abort callback cannot leave a ctypes callback: Python would print
    "Exception ignored on calling ctypes callback function" with a traceback and carry on
    decoding. Taken here instead: the callback's owner is marked, its next call aborts the
    decode, and the KeyboardInterrupt is raised once the decode has returned
    (AbortAtDeadline.__exit__)."""
    import sys

    if getattr(sys.unraisablehook, "benchrig_abort", False):
        return
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        owner = getattr(unraisable.object, "__self__", None)
        if isinstance(owner, AbortAtDeadline) and isinstance(unraisable.exc_value,
                                                             KeyboardInterrupt):
            owner.interrupted = True
            return
        previous(unraisable)

    hook.benchrig_abort = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


class _Captured(Exception):
    def __init__(self, tokens: list[int], stop: list[str]) -> None:
        self.tokens, self.stop = tokens, stop


class _PromptCapture:
    """Stands in for the Llama given to llama-cpp-python's chat handler, so the handler
    renders and tokenizes the prompt exactly as it would, and we take it from there."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def create_completion(self, prompt: Any, stop: Any = None, **_: Any) -> Any:
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        tokens = prompt if isinstance(prompt, list) else self._llm.tokenize(
            prompt.encode("utf-8"), special=True)
        raise _Captured(list(tokens), [s for s in stops if s])


def render_prompt(llm: Any, messages: list[dict[str, str]]) -> tuple[list[int], list[str]]:
    """The model's chat template applied to `messages`: (prompt tokens, stop strings)."""
    from llama_cpp import llama_chat_format

    handler: Any = (llm.chat_handler or llm._chat_handlers.get(llm.chat_format)
               or llama_chat_format.get_chat_completion_handler(llm.chat_format))
    try:
        handler(llama=_PromptCapture(llm), messages=messages, stream=True)
    except _Captured as captured:
        return captured.tokens, captured.stop
    raise DriverError("harness", f"chat format {llm.chat_format!r} did not produce a prompt")


class _Generation:
    """One attempt's decoding, token by token: text fed to the collector until the end of
    generation, a stop string of the chat template, or the token budget (`finish` says which);
    the count so far, and what a result needs when the deadline cuts it short."""

    def __init__(self, llm: Any, prompt: list[int], stops: list[str], budget: int,
                 load_s: float | None, progress: Progress) -> None:
        import llama_cpp  # already loaded by _load

        self.llm, self.prompt, self.stops, self.budget = llm, prompt, stops, budget
        self.load_s, self.progress = load_s, progress
        self.is_eog, self.vocab = llama_cpp.llama_vocab_is_eog, llm._model.vocab
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.collector = StreamCollector(time.perf_counter())
        self.splitter = self.collector.splitter  # fed directly: one call per token, nothing more
        self.text_tail, self.count = "", 0
        self.finish: str | None = None

    def take(self, token: int) -> bool:
        """One generated token; whether generation ends with it."""
        if self.is_eog(self.vocab, token):
            self.finish = "stop"
            return True
        self.count += 1
        piece = self.decoder.decode(self.llm.detokenize([token]))
        now = time.perf_counter()
        self.text_tail = (self.text_tail + piece)[-STOP_WINDOW:]
        hit = next((stop for stop in self.stops if stop in self.text_tail), None)
        if hit is not None:  # the template's stop string: keep what precedes it
            cut = len(self.text_tail) - self.text_tail.index(hit)
            self.splitter.feed(piece[: max(0, len(piece) - cut)], now)
            self.finish = "stop"
            return True
        self.splitter.feed(piece, now)
        self.progress.tokens(self.count)
        if self.count >= self.budget:
            self.finish = "length"
            return True
        return False

    def metrics(self, ended: float, tokens: int) -> Metrics:
        """The figures of `tokens` generated until `ended`, with llama.cpp's own counters."""
        self.collector.finish(ended)
        engine = perf_counters(self.llm)
        return self.collector.metrics(
            tokens, "counted", len(self.prompt), "counted",
            engine["prompt_per_second"], engine, self.load_s, cost_usd=0.0,
            cost_source="local model (in process): no charge")

    def run(self, temperature: float, deadline: Deadline) -> None:
        """Prefill and generate, spending from `deadline`; it can stop a long prefill."""
        deadline.spend("prefill")  # the first token comes after the whole prompt is evaluated
        abort = AbortAtDeadline(self.llm, deadline)
        tokens = self.llm.generate(self.prompt, temp=temperature, **SAMPLING)
        try:
            with abort:
                for token in tokens:
                    if self.count == 0:
                        deadline.spend("generation")
                    if self.take(token):
                        break
                    if deadline.expired:
                        raise _ran_out(deadline, f" after {self.count} tokens", self)
        except (ValueError, RuntimeError) as exc:
            if abort.fired:  # llama_decode stopped by the deadline (returns 2)
                raise _ran_out(deadline, f" after {self.count} tokens", self) from None
            raise DriverError("infra", f"llama.cpp failed: {exc}") from None
        finally:
            tokens.close()


def _ran_out(deadline: Deadline, after: str, generation: _Generation | None = None,
             ) -> DriverError:
    """The attempt's deadline passed in `deadline.phase`; what was generated is kept."""
    partial = None
    if generation is not None:
        splitter = generation.splitter
        partial = DriverOutput(
            Transcript(answer=splitter.answer, thinking=splitter.thinking),
            generation.metrics(time.perf_counter(), generation.collector.token_events),
            {"name": "llama-cpp-python"})
    return DriverError("timeout", f"{deadline.phase} ran out of the attempt's timeout_s="
                       f"{deadline.budget_s:g}{after} ({deadline.elapsed():.2f} s into the "
                       "attempt)", partial, phase=deadline.phase)


def _budget(settings: Settings, prompt_n: int) -> int:
    """The attempt's real token limit: max_tokens, or the context window's room if less."""
    room = settings.context_size - prompt_n
    if room <= 0:
        raise DriverError("infra", f"the prompt ({prompt_n} tokens) does not fit the "
                          f"context window ({settings.context_size})")
    return min(settings.max_tokens, room)


def _effective(settings: Settings, llm: Any, threads: int, budget: int,
               prompt_n: int) -> dict[str, Any]:
    # no think switch exists here: the chat template runs as it is
    return {"temperature": settings.temperature, "seed": settings.seed,
            "think": None, "context_size": settings.context_size,
            "threads": threads, "max_tokens": budget,
            "chat_format": llm.chat_format, "prompt_cache": False, **SAMPLING,
            **({"max_tokens_capped_by": f"context {settings.context_size} - prompt "
                                        f"{prompt_n}"}
               if budget < settings.max_tokens else {})}


def word_tokens(llm: Any, words: list[str]) -> list[int] | None:
    """How many tokens each word takes after a space, from one tokenization of them all: a
    token whose text starts with a space starts a word. None when that does not give one
    count per word (a tokenizer that does not split at spaces)."""
    tokens = llm.tokenize((" " + " ".join(words)).encode("utf-8"), add_bos=False,
                          special=False)
    counts: list[int] = []
    for token in tokens:
        if llm.detokenize([token]).startswith(b" ") or not counts:
            counts.append(1)
        else:
            counts[-1] += 1
    return counts if len(counts) == len(words) else None


def _past_training(llm: Any, n_ctx: int) -> DriverError | None:
    """A window past the model's trained context: llama.cpp only warns (its words below) and
    runs positions the model never saw, so a context step there is refused."""
    trained = trained_context(llm)
    if trained is None or n_ctx <= trained:
        return None
    return DriverError("infra", f"llama.cpp: n_ctx_seq ({n_ctx}) > n_ctx_train ({trained}) -- "
                       "possible training context overflow: the window is past the model's "
                       "trained context")


class LlamaCppDriver:
    name = "llamacpp"
    kind = "runtime"
    # A new n_ctx rebuilds the model: the context suite warms each window up, untimed.
    reloads_on_context_change = True
    in_process = True  # the model runs in this process: one loaded at a time

    def token_counter(self, request: DriverRequest) -> TokenCounter:
        """The model's own tokenizer over the whole prompt, chat template included (the
        model loaded at the request's window, as the step will use it)."""
        path = resolve_model(request.model)
        llm, _ = self._loaded(request, path, request.settings.threads or default_threads())

        def count(messages: list[dict[str, str]]) -> int:
            with _in_use():
                return len(render_prompt(llm, messages)[0])

        def words(text: list[str]) -> list[int] | None:
            with _in_use():
                return word_tokens(llm, text)

        return TokenCounter(count, "tokenizer", f"the model's tokenizer over the whole prompt "
                            f"(chat format {llm.chat_format})", True, words)

    def preflight(self, model: str, provider: str | None) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise UsageError(f"the llamacpp driver needs llama-cpp-python: {INSTALL_HINT}")
        resolve_model(model)

    @staticmethod
    def _loaded(request: DriverRequest, path: Path, threads: int) -> tuple[Any, float | None]:
        request.progress.phase(f"loading {path.name}")
        request.deadline.spend("load")
        try:
            llm, load_s = _load(path, request.settings.context_size, threads)
        except (ValueError, RuntimeError, OSError) as exc:
            raise DriverError("infra", f"llama.cpp could not load {path}: {exc}") from None
        if request.deadline.expired:  # a load cannot be cut; nothing else starts after it
            raise _ran_out(request.deadline, "")
        # Elsewhere a window past training only leaves unused room; a context step would
        # measure positions the model never saw.
        with _in_use():  # reads the model: never one the exit has closed
            past = _past_training(llm, request.settings.context_size)
        if past is not None and request.strict_context:
            raise past
        return llm, load_s

    def run(self, request: DriverRequest) -> DriverOutput:
        path = resolve_model(request.model)
        threads = request.settings.threads or default_threads()
        llm, load_s = self._loaded(request, path, threads)
        with _in_use():  # the model is not freed at exit while this attempt decodes
            return self._run(request, path, threads, llm, load_s)

    def _run(self, request: DriverRequest, path: Path, threads: int, llm: Any,
             load_s: float | None) -> DriverOutput:
        settings = request.settings
        import llama_cpp  # already loaded by _load

        prompt, stops = render_prompt(llm, list(request.messages))
        budget = _budget(settings, len(prompt))  # recorded: the real limit of this attempt
        llm.reset()  # no prompt cache across attempts: each one pays its own prefill
        llama_cpp.llama_perf_context_reset(llm.ctx)
        if settings.seed is not None:
            llm.set_seed(settings.seed)
        request.progress.phase("generating")
        rss_before = rss_bytes()
        generation = _Generation(llm, prompt, stops, budget, load_s, request.progress)
        generation.run(settings.temperature, request.deadline)
        ended = time.perf_counter()
        generation.splitter.feed(generation.decoder.decode(b"", final=True), ended)
        metrics = generation.metrics(ended, generation.count)
        metrics.engine["memory"] = {  # sampled outside the timed span
            "source": "benchrig process (in-process model)", "rss_before_bytes": rss_before,
            "rss_after_bytes": rss_bytes(), "kv_cache_bytes": kv_cache_bytes(llm),
            "kv_cache_source": KV_SOURCE, "n_ctx": llm.n_ctx(), "n_ctx_train":
            trained_context(llm), "placement": "cpu"}  # built for CPU, no layer offloaded
        return DriverOutput(
            transcript=Transcript(answer=generation.splitter.answer,
                                  thinking=generation.splitter.thinking,
                                  finish_reason=generation.finish),
            metrics=metrics,
            runtime={"name": "llama-cpp-python", "version": llama_cpp.__version__,
                     "model_path": str(path)},
            effective=_effective(settings, llm, threads, budget, len(prompt)),
        )

    def tool_turn(self, request: DriverRequest, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]]) -> ToolReply:
        """One reply of a tool conversation in process, through llama-cpp-python's
        function-calling chat handler (benchrig.local.function_calling), not streamed."""
        path = resolve_model(request.model)
        threads = request.settings.threads or default_threads()
        llm, load_s = self._loaded(request, path, threads)
        with _in_use():  # the model is not freed at exit while this turn decodes
            return self._tool_turn(request, messages, tools, path, threads, llm, load_s)

    def _tool_turn(self, request: DriverRequest, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]], path: Path, threads: int, llm: Any,
                   load_s: float | None) -> ToolReply:
        from benchrig.local.function_calling import TOOL_FORMAT_NOTE, tool_completion

        settings = request.settings
        import llama_cpp  # already loaded by _load

        llm.reset()
        if settings.seed is not None:
            llm.set_seed(settings.seed)
        request.deadline.spend("tool turn")
        abort = AbortAtDeadline(llm, request.deadline)
        began = time.perf_counter()
        try:
            with abort:
                reply = tool_completion(llm, messages, tools, settings.temperature,
                                        settings.max_tokens, dict(SAMPLING))
        except (ValueError, RuntimeError) as exc:
            if abort.fired:
                raise _ran_out(request.deadline, "") from None
            raise DriverError("infra", f"llama.cpp failed: {exc}") from None
        wall = time.perf_counter() - began
        effective = {**_effective(settings, llm, threads, settings.max_tokens, 0),
                     "tool_chat_format": TOOL_FORMAT_NOTE, "stream": False,
                     "placement": "cpu"}  # loaded with no GPU layers (n_gpu_layers 0)
        reply["load_time_s"] = load_s  # kept with the turn's raw reply (None: loaded before)
        return tool_reply(reply, "llama-cpp-python", wall, runtime={
            "name": "llama-cpp-python", "version": llama_cpp.__version__,
            "model_path": str(path)}, effective=effective, tokens_source="counted")
