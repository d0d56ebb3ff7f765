"""Ollama's native API: `/api/chat` streamed as NDJSON, with the server's own counters kept raw."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from benchrig.core.deadline import Deadline
from benchrig.core.errors import DriverError, UsageError
from benchrig.core.measurements import TokenSource
from benchrig.core.settings import Settings
from benchrig.core.toolcase import ToolReply, ToolsUnsupported
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.httpstream import (
    MALFORMED,
    Retries,
    StreamRead,
    as_text,
    base_url,
    client,
    count,
    fed,
    malformed,
    per_second,
    positive,
    post_stream,
    request_json,
    with_retries,
    with_retries_reply,
)
from benchrig.drivers.toolreply import answer_of, calls_of
from benchrig.metrics import StreamCollector
from benchrig.streams import NDJSONDecoder

DEFAULT_HOST = "http://127.0.0.1:11434"
NS = 1e9
COUNTERS = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
            "prompt_eval_cached_count", "eval_count", "eval_duration")


def ollama_url(provider: str | None) -> str:
    """The provider slot, else OLLAMA_HOST (which may omit the scheme), else the default."""
    if provider:
        return base_url(provider, "ollama")
    host = os.environ.get("OLLAMA_HOST", "").strip()
    if not host:
        return DEFAULT_HOST
    if "://" not in host:
        host = f"http://{host}"
    if host.count(":") == 1:  # scheme only: Ollama's default port
        host = f"{host}:11434"
    return base_url(host.replace("0.0.0.0", "127.0.0.1"), "ollama (OLLAMA_HOST)")


def _same_model(entry: dict[str, Any], model: str) -> bool:
    names = {entry.get("name"), entry.get("model")}
    return model in names or f"{model}:latest" in names


def placement(entry: dict[str, Any] | None) -> str | None:
    """From /api/ps: all in GPU memory, all in CPU memory, or split between them."""
    if not entry:
        return None
    size, vram = entry.get("size"), entry.get("size_vram")
    if not isinstance(size, int) or not isinstance(vram, int) or size <= 0:
        return None
    return "gpu" if vram >= size else "cpu" if vram == 0 else "split"


def trained_context(show: dict[str, Any]) -> int | None:
    """The model's trained context from /api/show (`model_info["<arch>.context_length"]`)."""
    info = show.get("model_info")
    if not isinstance(info, dict):
        return None
    found = [v for k, v in info.items() if isinstance(k, str) and k.endswith(".context_length")
             and isinstance(v, int) and not isinstance(v, bool) and v > 0]
    return found[0] if found else None


def _loaded(http: Any, root: str, model: str, deadline: Deadline) -> dict[str, Any] | None:
    """The model's /api/ps entry; None when it is not loaded or the server cannot say (an
    old build without /api/ps, or no time left, must not fail an attempt whose answer is
    fine)."""
    try:
        running = request_json(http, "GET", f"{root}/api/ps",
                               deadline=deadline).get("models") or []
    except DriverError:
        return None
    if not isinstance(running, list):
        return None
    return next((m for m in running if isinstance(m, dict) and _same_model(m, model)), None)


class ChatLines:
    """The lines of one /api/chat stream, fed to a collector as they arrive."""

    def __init__(self, collector: StreamCollector, url: str) -> None:
        self.collector, self.url = collector, url
        self.tool_calls: list[dict[str, Any]] = []

    def line(self, raw: bytes, now: float) -> dict[str, Any] | None:
        """Take one line; return it when it is the final (done) one."""
        try:
            return self._line(raw, now)
        except MALFORMED as exc:
            raise malformed(self.url, raw, exc) from None

    def _line(self, raw: bytes, now: float) -> dict[str, Any] | None:
        data = json.loads(raw)  # not JSON: MALFORMED, reported by line()
        if not isinstance(data, dict):
            return None
        if "error" in data:
            raise DriverError("infra", f"Ollama: {data['error']}")
        message = data.get("message") or {}
        calls = [c for c in message.get("tool_calls") or () if isinstance(c, dict)]
        self.tool_calls.extend(calls)  # a call arrives whole; arguments are an object
        self.collector.delta(now, content=message.get("content"),
                             reasoning=message.get("thinking"), tool_call=bool(calls),
                             tool_bytes=len(json.dumps(calls)) if calls else 0)
        return data if data.get("done") else None


def _cut(error: DriverError, collector: StreamCollector, read: StreamRead,
         now: float) -> DriverError:
    """`error` (the deadline ran out mid-stream) with what the stream had given kept."""
    collector.finish(now, read.dispatched)
    engine = {"source": "ollama /api/chat (cut by the deadline)",
              "stream": {**read.to_json(), "token_events": collector.token_events}}
    metrics = collector.metrics(collector.token_events, "estimated", None, None, None, engine,
                                cost_source="no price table")
    return DriverError(error.kind, error.message, DriverOutput(
        Transcript(answer=collector.splitter.answer, thinking=collector.splitter.thinking),
        metrics, {"name": "ollama"}), phase=error.phase)


def ollama_options(s: Settings) -> dict[str, Any]:
    """The request's `options`: window, budget, temperature, and the seed and threads when
    set (a chat and a tool turn send the same ones)."""
    options: dict[str, Any] = {"num_ctx": s.context_size, "num_predict": s.max_tokens,
                               "temperature": s.temperature}
    if s.seed is not None:
        options["seed"] = s.seed
    if s.threads is not None:
        options["num_thread"] = s.threads
    return options


class OllamaDriver:
    """Provider slot = Ollama's base URL (default OLLAMA_HOST or http://127.0.0.1:11434)."""

    name = "ollama"
    kind = "runtime"
    # A new num_ctx reloads the model: the context suite warms each window up, untimed.
    reloads_on_context_change = True

    def preflight(self, model: str, provider: str | None) -> None:
        """The server answers /api/tags and lists `model` (a bare name means `:latest`)."""
        from benchrig.drivers.preflight import get_json, listed_names, need_model

        root = ollama_url(provider)
        tags = get_json(f"{root}/api/tags", "Ollama")
        if tags is None:
            raise UsageError(f"{root} has no /api/tags: is it an Ollama server?")
        names = listed_names(tags, "models", ("name", "model"))
        if names is None:
            raise UsageError(f"{root}/api/tags lists no models: is it an Ollama server?")
        wanted = model if ":" in model else f"{model}:latest"
        need_model(model if model in names else wanted, names, f"Ollama at {root}",
                   f"pull it: ollama pull {model}")

    def run(self, request: DriverRequest) -> DriverOutput:
        root = ollama_url(request.provider)
        return with_retries({"name": "ollama", "base_url": root},
                            lambda retries: self._run(request, root, retries))

    def _run(self, request: DriverRequest, root: str, retries: Retries) -> DriverOutput:
        s, model, deadline = request.settings, request.model, request.deadline
        with client(deadline.spend("server info"), root) as http:
            request.progress.phase(f"asking {root} about {model}")
            version = as_text(request_json(http, "GET", f"{root}/api/version",
                                           retries=retries, deadline=deadline).get("version"))
            show = request_json(http, "POST", f"{root}/api/show", {"model": model},
                                retries=retries, deadline=deadline)
            capabilities = show.get("capabilities")
            trained = trained_context(show)
            if request.strict_context and trained and s.context_size > trained:
                raise DriverError("infra", f"Ollama: num_ctx {s.context_size} is past the "
                                  f"model's trained context ({trained}, /api/show "
                                  "model_info <arch>.context_length)")
            can_think = "thinking" in capabilities if isinstance(capabilities, list) else None
            think = s.think if s.think is not None and can_think else None
            options = ollama_options(s)
            # A different num_ctx makes Ollama reload the model: do that untimed, first.
            before = _loaded(http, root, model, deadline)
            warmup: dict[str, Any] | None = None
            load_time_s = None
            if before is None or before.get("context_length") != s.context_size:
                request.progress.phase(f"loading {model} (num_ctx {s.context_size})")
                deadline.spend("warm-up")  # the load shares the attempt's time with the stream
                started = time.perf_counter()
                body = {"model": model, "messages": [], "stream": False,
                        "options": {"num_ctx": s.context_size}}
                reply = request_json(http, "POST", f"{root}/api/chat", body,
                                     timeout_s=deadline.left(), retries=retries,
                                     deadline=deadline)
                load_time_s = time.perf_counter() - started
                warmup = {k: reply.get(k) for k in ("done_reason", "load_duration")
                          if k in reply}
            messages = list(request.messages)
            body = {"model": model, "messages": messages, "stream": True, "options": options}
            if think is not None:
                body["think"] = think
            request.progress.phase("generating")
            transcript, engine, collector = self._stream(http, root, body, request, retries)
            deadline.spend("server info")
            after = _loaded(http, root, model, deadline)
        retries.record(engine)
        engine["placement"] = placement(after)
        if after is not None:
            engine["ps"] = {k: after.get(k) for k in ("size", "size_vram", "context_length")}
        if warmup is not None:
            engine["warmup"] = warmup
        prompt_n, prompt_ns = count(engine.get("prompt_eval_count")), positive(
            engine.get("prompt_eval_duration"))
        eval_n = count(engine.get("eval_count"))
        engine["eval_per_second"] = per_second(eval_n, positive(engine.get("eval_duration")), NS)
        out_source: TokenSource = "server" if eval_n is not None else "estimated"
        output = eval_n if eval_n is not None else collector.token_events
        metrics = collector.metrics(
            output, out_source, prompt_n, "server",
            per_second(prompt_n, prompt_ns, NS), engine, load_time_s,
            cost_source="no price table",  # not BenchRig's own run: no guessed 0
            received_bytes=collector.received_bytes)  # Ollama hides no generated text
        effective = {"think": think, "think_capable": can_think,
                     "temperature": options["temperature"], "seed": options.get("seed"),
                     "max_tokens": options["num_predict"], "context_size": options["num_ctx"],
                     "threads": options.get("num_thread"), "num_ctx": options["num_ctx"],
                     "num_predict": options["num_predict"], "capabilities": capabilities}
        return DriverOutput(transcript=transcript, metrics=metrics,
                            runtime={"name": "ollama", "version": version, "base_url": root},
                            effective=effective)

    def _stream(self, http: Any, root: str, body: dict[str, Any], request: DriverRequest,
                retries: Retries) -> tuple[Transcript, dict[str, Any], StreamCollector]:
        url = f"{root}/api/chat"
        request.deadline.spend("stream")
        decoder, read = NDJSONDecoder(), StreamRead()
        final: dict[str, Any] | None = None
        dispatched = time.perf_counter()
        collector = StreamCollector(dispatched)
        lines = ChatLines(collector, url)
        line = lines.line
        now = dispatched

        try:
            for chunk, now in post_stream(http, url, body, read, request.deadline,
                                          retries=retries):
                for raw in fed(decoder.feed, chunk, url):
                    final = line(raw, now) or final
                request.progress.tokens(collector.token_events)
                if final is not None:
                    break
        except DriverError as exc:
            if exc.kind != "timeout":
                raise
            raise _cut(exc, collector, read, time.perf_counter()) from None
        tail = decoder.finish()
        if final is None and tail:
            try:  # a last line without its newline is still a line if it is whole
                final = line(tail, now)
            except DriverError:
                raise DriverError("infra", f"the stream from {url} was cut mid-line after "
                                  f"{read.bytes} bytes: {tail[:120]!r}") from None
        if final is None:
            raise DriverError("infra", f"the stream from {url} ended after {read.bytes} bytes "
                              "without its final (done) line")
        collector.finish(now, read.dispatched)
        engine: dict[str, Any] = {"source": "ollama /api/chat",
                                  **{k: final[k] for k in COUNTERS if k in final}}
        engine["stream"] = {**read.to_json(), "token_events": collector.token_events}
        transcript = Transcript(answer=collector.splitter.answer,
                                thinking=collector.splitter.thinking,
                                finish_reason=final.get("done_reason"),
                                tool_calls=tuple(lines.tool_calls))
        return transcript, engine, collector


    def tool_turn(self, request: DriverRequest, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]]) -> ToolReply:
        """One reply of a tool conversation through /api/chat: `tools` sent, not streamed;
        `message.tool_calls` read (arguments arrive as an object). A model whose /api/show
        capabilities lack `tools` is unsupported."""
        root = ollama_url(request.provider)
        return with_retries_reply({"name": "ollama", "base_url": root},
                                  lambda retries: self._tool_turn(request, root, messages,
                                                                  tools, retries))

    def _tool_turn(self, request: DriverRequest, root: str, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]], retries: Retries) -> ToolReply:
        s, model, deadline = request.settings, request.model, request.deadline
        with client(deadline.spend("server info"), root) as http:
            version = as_text(request_json(http, "GET", f"{root}/api/version",
                                           retries=retries, deadline=deadline).get("version"))
            show = request_json(http, "POST", f"{root}/api/show", {"model": model},
                                retries=retries, deadline=deadline)
            capabilities = show.get("capabilities")
            if isinstance(capabilities, list) and "tools" not in capabilities:
                raise ToolsUnsupported(f"Ollama model {model!r} lacks the tools capability "
                                       f"(capabilities: {', '.join(map(str, capabilities))})")
            options = ollama_options(s)
            before = _loaded(http, root, model, deadline)
            if before is None or before.get("context_length") != s.context_size:
                deadline.spend("warm-up")  # untimed, and outside every rate
                request_json(http, "POST", f"{root}/api/chat",
                             {"model": model, "messages": [], "stream": False,
                              "options": {"num_ctx": s.context_size}},
                             timeout_s=deadline.left(), retries=retries, deadline=deadline)
            body: dict[str, Any] = {"model": model, "messages": ollama_messages(messages),
                                    "tools": tools, "stream": False, "options": options}
            can_think = "thinking" in capabilities if isinstance(capabilities, list) else None
            if s.think is not None and can_think:
                body["think"] = s.think
            deadline.spend("tool turn")
            began = time.perf_counter()
            reply = request_json(http, "POST", f"{root}/api/chat", body,
                                 timeout_s=deadline.left(), retries=retries, deadline=deadline)
            wall = time.perf_counter() - began
            deadline.spend("server info")
            after = _loaded(http, root, model, deadline)
        message = reply.get("message")
        if not isinstance(message, dict):
            raise DriverError("infra", f"{root}/api/chat answered without a message: "
                              f"{str(reply)[:200]!r}")
        calls = calls_of(message)
        content = message.get("content")
        counters = {k: reply[k] for k in COUNTERS if k in reply}
        return ToolReply(
            text=answer_of(content), calls=tuple(calls),
            finish_reason=as_text(reply.get("done_reason")), wall_s=wall,
            input_tokens=count(reply.get("prompt_eval_count")),
            output_tokens=count(reply.get("eval_count")),
            raw={"message": message, **counters, "placement": placement(after)},
            runtime={"name": "ollama", "version": version, "base_url": root},
            effective={"think": body.get("think"), "temperature": options["temperature"],
                       "seed": options.get("seed"), "max_tokens": options["num_predict"],
                       "context_size": options["num_ctx"], "threads": options.get("num_thread"),
                       "stream": False, "capabilities": capabilities,
                       "placement": placement(after)})


def ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped conversation messages → Ollama's: a call's arguments as an object, a
    tool result named by `tool_name`."""
    converted = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {"function": {"name": c["function"]["name"],
                              "arguments": json.loads(c["function"]["arguments"])}}
                for c in message["tool_calls"]]
        if message.get("role") == "tool":
            message = {"role": "tool", "content": message.get("content", ""),
                       "tool_name": message.get("name")}
        converted.append(message)
    return converted
