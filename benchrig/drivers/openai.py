"""Any OpenAI-compatible server: `/chat/completions` as SSE (llama.cpp, vLLM, LM Studio…)."""

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
    positive,
    post_stream,
    request_json,
    with_retries,
    with_retries_reply,
)
from benchrig.drivers.toolreply import refuses_tools, tool_reply
from benchrig.haystack import TokenCounter
from benchrig.metrics import StreamCollector
from benchrig.streams import SSEDecoder

API_KEY_ENV = "OPENAI_API_KEY"
TOKENIZE_TIMEOUT_S = 30.0
# Tokenizer routes at the server's root: llama.cpp's llama-server, then llama-cpp-python's
# server (`benchrig serve`): (path, body of a text, the count in the answer).
TOKENIZERS: tuple[tuple[str, str], ...] = (("/tokenize", "content"),
                                           ("/extras/tokenize", "input"))
BASE_URL_ENV = "OPENAI_BASE_URL"
DONE = b"[DONE]"


def openai_url(provider: str | None) -> str:
    url = provider or os.environ.get(BASE_URL_ENV)
    if not url:
        raise UsageError("openai needs the server's base URL in the provider slot: scripts/"
                         "run.sh <task> <model> openai http://127.0.0.1:8080/v1 (or set "
                         f"{BASE_URL_ENV})")
    return base_url(url, "openai")


def _headers() -> dict[str, str]:
    """The key comes only from the environment, and is never recorded anywhere."""
    key = os.environ.get(API_KEY_ENV)
    return {"Authorization": f"Bearer {key}"} if key else {}


def request_body(model: str, messages: list[Any], s: Settings) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": True,
                            "stream_options": {"include_usage": True},
                            "max_tokens": s.max_tokens, "temperature": s.temperature}
    if s.seed is not None:
        body["seed"] = s.seed
    # No standard switch exists; llama.cpp and vLLM read it from the chat template's
    # arguments. Sent only to thinking models, so other servers never see the field.
    if s.think is not None and s.thinking_model:
        body["chat_template_kwargs"] = {"enable_thinking": s.think}
    return body


class _Stream:
    """The state of one SSE response as its events arrive."""

    def __init__(self, collector: StreamCollector) -> None:
        self.collector = collector
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] | None = None
        self.done = False
        self.events = 0
        self.completion_id: str | None = None

    def event(self, data: bytes, now: float, url: str) -> None:
        try:
            self._event(data, now, url)
        except MALFORMED as exc:
            raise malformed(url, data, exc) from None

    def _event(self, data: bytes, now: float, url: str) -> None:
        self.events += 1
        if data == DONE:
            self.done = True
            return
        chunk = json.loads(data)  # not JSON: MALFORMED, reported by event()
        if not isinstance(chunk, dict):
            return
        self.completion_id = self.completion_id or as_text(chunk.get("id"))
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise DriverError("infra", f"the server reported an error mid-stream: {message}")
        if isinstance(chunk.get("usage"), dict):  # comes last, after finish_reason
            self.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):  # llama.cpp, on whichever chunk it likes
            self.timings = chunk["timings"]
        for choice in chunk.get("choices") or ():  # vLLM may send choices: null
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            fragments = [f for f in delta.get("tool_calls") or () if isinstance(f, dict)]
            for fragment in fragments:
                self._tool_fragment(fragment)
            self.collector.delta(now, content=delta.get("content"), reasoning=reasoning,
                                 tool_call=bool(fragments))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _tool_fragment(self, fragment: dict[str, Any]) -> None:
        """Fragments share an index; id and name come once, arguments in pieces."""
        call = self.calls.setdefault(int(fragment.get("index", 0)), {
            "id": None, "type": "function", "function": {"name": "", "arguments": ""}})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["function"]["name"] += function["name"]
        if function.get("arguments"):
            call["function"]["arguments"] += function["arguments"]


def _get_optional(http: Any, url: str, headers: dict[str, str],
                  deadline: Deadline) -> dict[str, Any] | None:
    """A GET that may not exist on this server: its JSON object, or None on any failure
    (no time left included)."""
    try:
        return request_json(http, "GET", url, headers=headers, timeout_s=5.0,
                            deadline=deadline)
    except DriverError:
        return None


class OpenAIDriver:
    """Provider slot = the base URL, e.g. http://127.0.0.1:8080/v1; key from OPENAI_API_KEY."""

    name = "openai"
    kind = "runtime"

    def preflight(self, model: str, provider: str | None) -> None:
        """The server answers /models (with the key, when one is set) and lists `model`; a
        server without the route, or without a model list there, is taken at its word."""
        from benchrig.drivers.preflight import get_json, listed_names, need_model

        root = openai_url(provider)
        names = listed_names(get_json(f"{root}/models", f"the server at {root}", _headers()),
                             "data", ("id",))
        if names is not None:
            need_model(model, names, f"the server at {root}", "name one it serves (GET /models)")

    def token_counter(self, request: DriverRequest) -> TokenCounter | None:
        """The server's own tokenizer (llama.cpp `/tokenize`, llama-cpp-python
        `/extras/tokenize`) over the messages' text, or None when it has neither (the chat
        template's tokens are not counted: no standard route renders it)."""
        server = openai_url(request.provider).removesuffix("/v1")
        headers = _headers()
        for path, field in TOKENIZERS:
            url = f"{server}{path}"

            def tokens(text: str, url: str = url, field: str = field) -> int:
                with client(TOKENIZE_TIMEOUT_S, url) as http:
                    reply = request_json(http, "POST", url, {field: text,
                                                             "model": request.model},
                                         headers, timeout_s=TOKENIZE_TIMEOUT_S)
                found = reply.get("tokens")
                if not isinstance(found, list):
                    raise DriverError("infra", f"{url}: no token list in the answer")
                return len(found)

            try:
                tokens("probe")
            except DriverError:
                continue

            def count(messages: list[dict[str, str]], tokens: Any = tokens) -> int:
                return sum(int(tokens(m["content"])) for m in messages)

            return TokenCounter(count, "server tokenizer", f"{path} over the message text "
                                "(the chat template's tokens are not counted)", False)
        return None

    def run(self, request: DriverRequest) -> DriverOutput:
        root = openai_url(request.provider)
        return with_retries({"name": "openai-compatible", "base_url": root},
                            lambda retries: self._run(request, root, retries))

    def _run(self, request: DriverRequest, root: str, retries: Retries) -> DriverOutput:
        s, deadline = request.settings, request.deadline
        url = f"{root}/chat/completions"
        headers = _headers()
        body = request_body(request.model, list(request.messages), s)
        decoder, read = SSEDecoder(), StreamRead()
        request.progress.phase("generating")
        with client(deadline.spend("stream"), root) as http:
            dispatched = time.perf_counter()
            collector = StreamCollector(dispatched)
            state = _Stream(collector)
            now = dispatched
            try:
                for chunk, now in post_stream(http, url, body, read, deadline, headers,
                                              retries):
                    for event in fed(decoder.feed, chunk, url):
                        state.event(event.data, now, url)
                        if state.done:
                            break
                    request.progress.tokens(collector.token_events)
                    if state.done:
                        break
            except DriverError as exc:
                if exc.kind != "timeout":
                    raise
                collector.finish(time.perf_counter(), read.dispatched)
                cut = self._output(request, root, body, state, read, None, None, None,
                                   keyed=bool(headers))
                raise DriverError(exc.kind, exc.message, cut, phase=exc.phase) from None
            if not state.done:
                events, unfinished = decoder.finish()
                for event in events:
                    state.event(event.data, now, url)
                if unfinished.strip() or state.finish_reason is None:
                    raise DriverError("infra", f"the stream from {url} was cut after "
                                      f"{read.bytes} bytes ({state.events} events, no "
                                      f"finish_reason or [DONE]): {unfinished[:120]!r}")
            collector.finish(now, read.dispatched)
            # After the timed stream, within what is left of the attempt's deadline: what
            # `benchrig serve` knows about this completion.
            deadline.spend("server info")
            server = _get_optional(http, f"{root}/benchrig/server", headers, deadline)
            perf = None
            if server is not None and state.completion_id:
                perf = _get_optional(http, f"{root}/benchrig/perf/{state.completion_id}",
                                     headers, deadline)
            probe: dict[str, Any] | None = None
            skipped: str | None = None
            if state.usage is None and state.timings is None and perf is None:
                probe, skipped = self._probe_usage(http, url, body, headers, deadline,
                                                   retries)
        output = self._output(request, root, body, state, read, probe, server, perf,
                              keyed=bool(headers))
        retries.record(output.metrics.engine)
        if skipped is not None:
            output.metrics.engine["usage_probe_skipped"] = skipped
        return output

    def _probe_usage(self, http: Any, url: str, body: dict[str, Any],
                     headers: dict[str, str], deadline: Deadline,
                     retries: Retries) -> tuple[dict[str, Any] | None, str | None]:
        """The server sent no usage while streaming (llama-cpp-python never does): ask for the
        prompt's token count with the same messages, unstreamed and one token long, after the
        timed stream, with only what is left of the attempt's deadline. (usage, why it was
        skipped or cut); a failure leaves the count unknown, it never fails the attempt."""
        if deadline.spend("usage probe") <= 0:
            return None, "no time left of the attempt's timeout_s"
        probe = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        probe["max_tokens"] = 1
        try:
            reply = request_json(http, "POST", url, probe, headers, timeout_s=deadline.left(),
                                 retries=retries, deadline=deadline)
        except DriverError as exc:
            return None, (f"cut: {exc.message}" if deadline.expired else None)
        usage = reply.get("usage")
        return (usage if isinstance(usage, dict) else None), None

    def _output(self, request: DriverRequest, root: str, sent: dict[str, Any], state: _Stream,
                read: StreamRead, probe: dict[str, Any] | None, server: dict[str, Any] | None,
                perf: dict[str, Any] | None, keyed: bool) -> DriverOutput:
        usage, timings, perf = state.usage or {}, state.timings or {}, perf or {}
        out_source: TokenSource = "server"
        output = count(usage.get("completion_tokens"))
        if output is None:
            output = count(timings.get("predicted_n"))
        if output is None:  # `benchrig serve` counts the tokens it generated
            output = count(perf.get("completion_tokens"))
        if output is None:  # an event may carry several tokens (a multi-byte character)
            output, out_source = state.collector.token_events, "estimated"
        prompt_n = count(timings.get("prompt_n"))
        input_tokens = count(usage.get("prompt_tokens"))
        if input_tokens is None and prompt_n is not None:
            input_tokens = prompt_n + (count(timings.get("cache_n")) or 0)
        if input_tokens is None:
            input_tokens = count(perf.get("prompt_n"))
        if input_tokens is None and probe is not None:
            input_tokens = count(probe.get("prompt_tokens"))
        prefill = positive(timings.get("prompt_per_second"))
        if prefill is None:
            prefill = positive(perf.get("prompt_per_second"))
        engine: dict[str, Any] = {
            "source": "openai-compatible stream", "usage": state.usage, "timings": state.timings,
            "server_perf": perf or None, "usage_probe": probe, "done_marker": state.done,
            "stream": {**read.to_json(), "events": state.events,
                       "token_events": state.collector.token_events},
        }
        # 0 only where BenchRig runs the model itself (`benchrig serve` answers its own
        # route); elsewhere null: BenchRig has no price table, and a guessed 0 would be a lie
        cost, cost_source = ((0.0, "local model (benchrig serve): no charge") if server
                             else (None, "no price table"))
        metrics = state.collector.metrics(
            output, out_source, input_tokens, "server", prefill, engine, cost_usd=cost,
            cost_source=cost_source)
        server = server or {}
        effective = {"temperature": sent.get("temperature"), "max_tokens": sent.get("max_tokens"),
                     "seed": sent.get("seed"),
                     "think": sent.get("chat_template_kwargs", {}).get("enable_thinking"),
                     # set by the server, not by this request: known only if it says so
                     "context_size": count(server.get("context_size")),
                     "threads": count(server.get("threads")),
                     "chat_format": as_text(server.get("chat_format")),
                     "api_key_env": API_KEY_ENV if keyed else None}
        transcript = Transcript(answer=state.collector.splitter.answer,
                                thinking=state.collector.splitter.thinking,
                                finish_reason=state.finish_reason,
                                tool_calls=tuple(state.calls[i] for i in sorted(state.calls)))
        runtime = {"name": as_text(server.get("server")) or "openai-compatible",
                   "version": as_text(server.get("version")), "base_url": root,
                   "http_server": read.server, "served": server or None}
        return DriverOutput(transcript=transcript, metrics=metrics, runtime=runtime,
                            effective=effective)

    def tool_turn(self, request: DriverRequest, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]]) -> ToolReply:
        """One reply of a tool conversation: `tools` sent, `tool_calls` read, not streamed (the
        initial transport of the tool-use suite), so only wall time is measured."""
        root = openai_url(request.provider)
        runtime = {"name": "openai-compatible", "base_url": root}
        return with_retries_reply(runtime, lambda retries: self._tool_turn(
            request, root, messages, tools, retries))

    def _tool_turn(self, request: DriverRequest, root: str, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]], retries: Retries) -> ToolReply:
        s, deadline = request.settings, request.deadline
        url = f"{root}/chat/completions"
        headers = _headers()
        body = {k: v for k, v in request_body(request.model, messages, s).items()
                if k not in ("stream", "stream_options")}
        body.update(stream=False, tools=tools, tool_choice="auto")
        with client(deadline.spend("tool turn"), root) as http:
            began = time.perf_counter()
            try:
                reply = request_json(http, "POST", url, body, headers,
                                     timeout_s=deadline.left(), retries=retries,
                                     deadline=deadline)
            except DriverError as exc:
                if refuses_tools(exc.message):
                    raise ToolsUnsupported(f"{root} refused the request with tools: "
                                           f"{exc.message}") from None
                raise
            wall = time.perf_counter() - began
            deadline.spend("server info")
            server = _get_optional(http, f"{root}/benchrig/server", headers, deadline) or {}
        return tool_reply(reply, url, wall, runtime={
            "name": as_text(server.get("server")) or "openai-compatible",
            "version": as_text(server.get("version")), "base_url": root,
            "served": server or None}, effective={
            "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens"),
            "seed": body.get("seed"), "stream": False, "tool_choice": "auto",
            "think": body.get("chat_template_kwargs", {}).get("enable_thinking"),
            "context_size": count(server.get("context_size")),
            "threads": count(server.get("threads")),
            "chat_format": as_text(server.get("chat_format")),
            "tool_chat_format": as_text(server.get("tool_chat_format")),
            "api_key_env": API_KEY_ENV if headers else None})

