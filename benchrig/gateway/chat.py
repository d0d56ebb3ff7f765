"""The OpenAI Chat Completions front: a request read into a ChatRequest (the forms agents
send, accepted), and a back end's events written back streamed (SSE) or whole."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Protocol

import orjson

from benchrig.gateway.call import (
    ChatRequest,
    Done,
    Event,
    Pause,
    Reasoning,
    RequestError,
    Text,
    ToolCallPart,
)

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
         "tool": "tool", "function": "tool"}
TEXT_PARTS = ("text", "input_text", "output_text")
EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _number(body: dict[str, Any], key: str, kind: type) -> Any:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{key} must be a number, not {type(value).__name__}")
    return kind(value)


def text_of(content: Any, where: str) -> tuple[str, int]:
    """Message content as text: a string, null (beside tool calls), or a list of parts whose
    text parts are joined; (text, how many non-text parts there were)."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        raise RequestError(f"{where}.content must be a string, null or a list of parts")
    texts, other = [], 0
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in TEXT_PARTS:
            texts.append(str(part.get("text") or ""))
        elif isinstance(part, dict):
            other += 1
        else:
            raise RequestError(f"{where}.content holds a part that is not an object")
    return "".join(texts), other


def _tool_calls(calls: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(calls, list):
        raise RequestError(f"{where}.tool_calls must be a list")
    out = []
    for i, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RequestError(f"{where}.tool_calls[{i}] has no function name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # some clients send the object itself
            arguments = orjson.dumps(arguments if arguments is not None else {}).decode()
        out.append({"id": str(call.get("id") or f"call_{i}"), "type": "function",
                    "function": {"name": function["name"], "arguments": arguments}})
    return out


def messages_of(raw: Any) -> tuple[tuple[dict[str, Any], ...], int]:
    """The conversation with plain string content, `developer` read as `system`, and each
    tool result named after the call it answers."""
    if not isinstance(raw, list) or not raw:
        raise RequestError("messages must be a non-empty list")
    names: dict[str, str] = {}
    out, other = [], 0
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise RequestError(f"{where} is not an object")
        role = ROLES.get(str(message.get("role")))
        if role is None:
            raise RequestError(f"{where}.role {str(message.get('role'))[:40]!r} is not one of "
                               + ", ".join(sorted(ROLES)))
        text, parts = text_of(message.get("content"), where)
        other += parts
        item: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant" and message.get("tool_calls"):
            item["tool_calls"] = _tool_calls(message["tool_calls"], where)
            names.update({c["id"]: c["function"]["name"] for c in item["tool_calls"]})
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            item["tool_call_id"] = call_id
            item["name"] = str(message.get("name") or names.get(call_id, "tool"))
        out.append(item)
    return tuple(out), other


def tools_of(raw: Any) -> tuple[dict[str, Any], ...]:
    """Function tools, each with a parameters schema (an empty object schema when none)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RequestError("tools must be a list")
    out = []
    for i, tool in enumerate(raw):
        function = tool.get("function") if isinstance(tool, dict) else None
        if (not isinstance(tool, dict) or tool.get("type", "function") != "function"
                or not isinstance(function, dict) or not isinstance(function.get("name"), str)):
            raise RequestError(f"tools[{i}] is not a function tool with a name")
        parameters = function.get("parameters")
        if parameters is None:
            parameters = EMPTY_PARAMETERS
        elif not isinstance(parameters, dict):
            raise RequestError(f"tools[{i}].function.parameters must be a JSON Schema object")
        out.append({"type": "function", "function": {
            "name": function["name"], "description": str(function.get("description") or ""),
            "parameters": parameters}})
    return tuple(out)


def parse_request(body: Any) -> ChatRequest:
    """A /v1/chat/completions body as a ChatRequest, or RequestError saying what is wrong."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object")
    messages, other = messages_of(body.get("messages"))
    n = body.get("n")
    if n not in (None, 1):
        raise RequestError("n must be 1: one choice per call")
    stop = body.get("stop")
    stops = (stop,) if isinstance(stop, str) else tuple(s for s in stop or () if
                                                        isinstance(s, str) and s)
    options = body.get("stream_options")
    max_tokens = _number(body, "max_completion_tokens", int) or _number(body, "max_tokens", int)
    if max_tokens is not None and max_tokens < 1:
        raise RequestError("max_tokens must be at least 1")
    return ChatRequest(
        model=str(body.get("model") or ""), messages=messages, tools=tools_of(body.get("tools")),
        tool_choice=body.get("tool_choice"), stream=bool(body.get("stream")),
        include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
        max_tokens=max_tokens, temperature=_number(body, "temperature", float),
        top_p=_number(body, "top_p", float), seed=_number(body, "seed", int), stop=stops,
        non_text_parts=other, raw=body)


def openai_body(request: ChatRequest) -> dict[str, Any]:
    """The request as a Chat Completions body: as sent when it came that way, else built
    from its plain fields (for an OpenAI-compatible upstream)."""
    if request.front == "openai-chat":
        return dict(request.raw)
    body: dict[str, Any] = {"model": request.model, "messages": list(request.messages)}
    if request.tools:
        body["tools"] = list(request.tools)
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    for key, value in (("max_tokens", request.max_tokens), ("temperature", request.temperature),
                       ("top_p", request.top_p), ("seed", request.seed)):
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def usage_of(done: Done | None) -> dict[str, Any] | None:
    if done is None or (done.input_tokens is None and done.output_tokens is None):
        return None
    prompt, completion = done.input_tokens or 0, done.output_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


class ChatWriter:
    """A back end's events as chat.completion.chunk SSE lines (protocols.md §6), or as one
    chat.completion object at the end."""

    def __init__(self, request: ChatRequest, model: str) -> None:
        self.request, self.model = request, model
        self.id = f"chatcmpl-{time.time_ns():x}"
        self.created = int(time.time())
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.done: Done | None = None

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk: dict[str, Any] = {"id": self.id, "object": "chat.completion.chunk",
                                 "created": self.created, "model": self.model,
                                 "choices": [{"index": 0, "delta": delta,
                                              "finish_reason": finish}]}
        if self.request.include_usage:
            chunk["usage"] = None
        return b"data: " + orjson.dumps(chunk) + b"\n\n"

    def start(self) -> bytes:
        return self._chunk({"role": "assistant", "content": None})

    def event(self, event: Event) -> bytes:
        """The SSE bytes for one event (empty for none); the whole reply is kept as well."""
        if isinstance(event, Text):
            self.text.append(event.text)
            return self._chunk({"content": event.text}) if event.text else b""
        if isinstance(event, Reasoning):
            self.reasoning.append(event.text)
            return self._chunk({"reasoning_content": event.text}) if event.text else b""
        if isinstance(event, ToolCallPart):
            return self._tool(event)
        if isinstance(event, Pause):
            return b""
        self.done = event
        reason = event.finish_reason or "stop"
        if self.calls and reason == "stop":
            reason = "tool_calls"
        out = self._chunk({}, reason)
        usage = usage_of(event)
        if self.request.include_usage:
            final = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                     "model": self.model, "choices": [], "usage": usage}
            out += b"data: " + orjson.dumps(final) + b"\n\n"
        return out + b"data: [DONE]\n\n"

    def _tool(self, part: ToolCallPart) -> bytes:
        call = self.calls.get(part.index)
        if call is None:
            call = self.calls[part.index] = {
                "id": part.id or f"call_{self.id[-8:]}_{part.index}", "type": "function",
                "function": {"name": part.name or "", "arguments": ""}}
            head = self._chunk({"tool_calls": [{"index": part.index, "id": call["id"],
                                                "type": "function", "function": {
                                                    "name": call["function"]["name"],
                                                    "arguments": ""}}]})
        else:
            head = b""
            if part.name:
                call["function"]["name"] += part.name
        if not part.arguments:
            return head
        call["function"]["arguments"] += part.arguments
        return head + self._chunk({"tool_calls": [{"index": part.index, "function": {
            "arguments": part.arguments}}]})

    def whole(self) -> dict[str, Any]:
        """The reply as one chat.completion object (an unstreamed request)."""
        done = self.done or Done("stop")
        calls = [self.calls[i] for i in sorted(self.calls)]
        message: dict[str, Any] = {"role": "assistant",
                                   "content": "".join(self.text) if self.text or not calls
                                   else None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if calls:
            message["tool_calls"] = calls
        reason = done.finish_reason or "stop"
        if calls and reason == "stop":
            reason = "tool_calls"
        return {"id": self.id, "object": "chat.completion", "created": self.created,
                "model": self.model, "choices": [{"index": 0, "message": message,
                                                  "finish_reason": reason}],
                "usage": usage_of(done)}


def error_body(message: str, status: int) -> bytes:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return orjson.dumps({"error": {"message": message, "type": kind, "code": status}})


def sse_error(message: str) -> bytes:
    """An error inside a stream that already began (the client then sees no [DONE])."""
    return b"data: " + error_body(message, 502) + b"\n\n"


class Writer(Protocol):
    """A front's writer: a call's events as that API's stream, or its reply whole."""

    def start(self) -> bytes: ...

    def event(self, event: Event) -> bytes: ...

    def whole(self) -> dict[str, Any]: ...


def stream_bytes(writer: Writer, events: Iterator[Event]) -> Iterator[bytes]:
    """The SSE chunks, and b"" where the back end pauses; the role chunk goes with the first
    event, so a request the back end refuses before answering is still an HTTP error."""
    started = False
    for event in events:
        head = b""
        if not started and not isinstance(event, Pause):
            head, started = writer.start(), True
        data = head + writer.event(event)
        if data or isinstance(event, Pause):
            yield data
