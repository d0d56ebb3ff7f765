"""An Ollama server behind the gateway, through its native `/api/chat` (NDJSON lines,
protocols.md §5): each call forwarded streamed, its lines read as they arrive, metered with
Ollama's own counters (prompt_eval_count, eval_count and their durations)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from benchrig.gateway.call import (
    BackendError,
    CallContext,
    ChatRequest,
    Done,
    Event,
    Pause,
    Reasoning,
    RequestError,
    Text,
    ToolCallPart,
)
from benchrig.gateway.upstream import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, loopback
from benchrig.textsafe import stored

NS_PER_MS = 1_000_000
MAX_LINE = 16 << 20  # bytes of one NDJSON line: a server that never ends one is cut off


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _ms(value: Any) -> float | None:
    count = _count(value)
    return count / NS_PER_MS if count else None


def ollama_messages(request: ChatRequest) -> list[dict[str, Any]]:
    """The conversation in Ollama's terms: a call's arguments an object, a tool result
    named by `tool_name`; arguments the model wrote as broken JSON go back as a string."""
    out = []
    for message in request.messages:
        item: dict[str, Any] = {"role": message["role"], "content": message.get("content")
                                or ""}
        if message["role"] == "tool":
            item["tool_name"] = message.get("name") or "tool"
        calls = []
        for call in message.get("tool_calls") or ():
            raw = call["function"]["arguments"]
            try:
                arguments = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                arguments = raw
            calls.append({"function": {"name": call["function"]["name"],
                                       "arguments": arguments}})
        if calls:
            item["tool_calls"] = calls
        out.append(item)
    return out


def ollama_body(request: ChatRequest, model: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in (("num_predict", request.max_tokens), ("temperature",
                       request.temperature), ("top_p", request.top_p),
                       ("seed", request.seed)):
        if value is not None:
            options[key] = value
    if request.stop:
        options["stop"] = list(request.stop)
    body: dict[str, Any] = {"model": model, "messages": ollama_messages(request),
                            "stream": True}
    if request.tools and request.tool_choice != "none":  # Ollama has no tool_choice
        body["tools"] = list(request.tools)
    if options:
        body["options"] = options
    return body


class OllamaBackend:
    """Forwards to the Ollama at `base_url` (its root, e.g. http://127.0.0.1:11434); `model`
    replaces the model a client asks for when given."""

    name = "ollama"

    def __init__(self, base_url: str, *, model: str | None = None) -> None:
        import httpx

        self.base_url = base_url.rstrip("/").removesuffix("/api")
        self.model = model
        # a loopback server is never reached through HTTP(S)_PROXY (a hop in every figure)
        self._http = httpx.Client(timeout=httpx.Timeout(READ_TIMEOUT_S,
                                                        connect=CONNECT_TIMEOUT_S),
                                  trust_env=not loopback(self.base_url))

    def model_id(self, requested: str) -> str:
        return self.model or requested

    def settings(self) -> dict[str, Any]:
        return {"server": "benchrig gateway", "backend": self.name, "upstream": self.base_url,
                "api": "ollama /api/chat", "model": self.model}

    def complete(self, request: ChatRequest, context: CallContext) -> Iterator[Event]:
        import httpx

        if request.non_text_parts:
            raise RequestError(f"{request.non_text_parts} image or audio part(s): the "
                               "gateway forwards text to Ollama")
        url = f"{self.base_url}/api/chat"
        body = ollama_body(request, self.model_id(request.model))
        try:
            with self._http.stream("POST", url, content=orjson.dumps(body),
                                   headers={"Content-Type": "application/json"}) as response:
                if response.status_code >= 400:
                    detail = stored(response.read().decode("utf-8", "replace"), 2000)
                    if response.status_code in (400, 404, 413, 422):
                        raise RequestError(f"Ollama said {response.status_code}: {detail}")
                    raise BackendError(f"Ollama said {response.status_code}: {detail}")
                yield from self._read(response.iter_raw())
        except httpx.HTTPError as exc:
            raise BackendError(f"{url}: {type(exc).__name__}: {exc}") from None

    def _read(self, raw: Iterator[bytes]) -> Iterator[Event]:
        buffer = b""
        calls: list[int] = [0]  # tool calls so far (numbered across lines)
        for chunk in raw:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            if len(buffer) > MAX_LINE:
                raise BackendError(f"Ollama sent a line over {MAX_LINE} bytes")
            for line in lines:
                for event in self._line(line, calls):
                    yield event
                    if isinstance(event, Done):
                        return
            yield Pause()  # this read is used up: what it held leaves together
        for event in self._line(buffer, calls):  # a whole reply may end without a newline
            yield event
            if isinstance(event, Done):
                return
        raise BackendError("Ollama's stream ended before its done line")

    def _line(self, line: bytes, calls: list[int]) -> Iterator[Event]:
        if not line.strip():
            return
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise BackendError("Ollama sent a line that is not JSON") from None
        if not isinstance(data, dict):
            return
        if data.get("error") is not None:
            raise BackendError(f"Ollama error: {stored(str(data['error']), 2000)}")
        found = data.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        if isinstance(message.get("thinking"), str) and message["thinking"]:
            yield Reasoning(message["thinking"])
        if isinstance(message.get("content"), str) and message["content"]:
            yield Text(message["content"])
        for call in message.get("tool_calls") or ():  # whole, its arguments an object
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            arguments = function.get("arguments")
            yield ToolCallPart(calls[0], f"call_{calls[0]}", str(function.get("name") or ""),
                               arguments if isinstance(arguments, str)
                               else orjson.dumps(arguments or {}).decode())
            calls[0] += 1
        if data.get("done") is True:
            yield self._done(data, calls[0])

    @staticmethod
    def _done(data: dict[str, Any], calls: int) -> Done:
        reason = data.get("done_reason")
        finish = "tool_calls" if calls else ("length" if reason == "length" else
                                             str(reason or "stop"))
        counters = {k: v for k, v in data.items() if k not in ("message", "model",
                                                               "created_at")}
        return Done(finish, input_tokens=_count(data.get("prompt_eval_count")),
                    output_tokens=_count(data.get("eval_count")),
                    prefill_ms=_ms(data.get("prompt_eval_duration")),
                    decode_ms=_ms(data.get("eval_duration")), counters=counters)

    def close(self) -> None:
        self._http.close()
