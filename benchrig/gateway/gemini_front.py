"""The Gemini front (`POST /v1beta/models/<model>:generateContent` and
`:streamGenerateContent`, what Gemini CLI speaks through GOOGLE_GEMINI_BASE_URL): contents,
systemInstruction and functionDeclarations read into a ChatRequest; a call's events written
back as GenerateContentResponse objects: SSE `data:` lines (`?alt=sse`), a JSON array
stream (without it), or one object."""

from __future__ import annotations

import re
from typing import Any

import orjson

from benchrig.gateway.call import (
    ChatRequest,
    Done,
    Event,
    Reasoning,
    RequestError,
    Text,
    ToolCallPart,
)
from benchrig.gateway.chat import EMPTY_PARAMETERS

# the model and the method are in the path; the SDK uses v1beta, v1 and v1alpha are the same
PATH = re.compile(r"^/(?:v1beta|v1alpha|v1)/models/(.+):(generateContent|"
                  r"streamGenerateContent)$")  # a model id may hold ':' (an Ollama tag)
ANY_PATH = re.compile(r"^/(?:v1beta|v1alpha)/|^/v1/models/[^/]*:")  # its errors: its shape
FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP",
          "function_call": "STOP", "content_filter": "SAFETY"}
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
          404: "NOT_FOUND", 411: "INVALID_ARGUMENT", 413: "INVALID_ARGUMENT",
          429: "RESOURCE_EXHAUSTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
          504: "DEADLINE_EXCEEDED"}
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
SCHEMA_ONE = ("items", "additionalProperties", "not")
NON_TEXT = ("inlineData", "fileData", "executableCode", "codeExecutionResult")


def json_schema(schema: Any) -> Any:
    """A Gemini `parameters` schema (OpenAPI types in capitals: OBJECT, STRING) as JSON
    Schema (lower case), walking only schema positions: a property named `type` is kept."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = kind.lower()
    elif isinstance(kind, list):
        out["type"] = [k.lower() if isinstance(k, str) else k for k in kind]
    for key in SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [json_schema(s) for s in out[key]]
    for key in SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: json_schema(s) for name, s in out[key].items()}
    for key in SCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = json_schema(out[key])
    return out


def _parts(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):  # the SDK's shorthand
        return [{"text": content}]
    if not isinstance(content, dict):
        raise RequestError(f"{where} must be a Content object with parts")
    parts = content.get("parts")
    if parts is None:
        return []
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise RequestError(f"{where}.parts must be a list of Part objects")
    return parts


def _text(parts: list[dict[str, Any]]) -> tuple[str, int]:
    """The text of the parts that are text (thoughts left out: the model's own notes are
    not sent back to another model), and how many parts were not text."""
    texts, other = [], 0
    for part in parts:
        if isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
        elif any(key in part for key in NON_TEXT):
            other += 1
    return "".join(texts), other


def _arguments(value: Any, where: str) -> str:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise RequestError(f"{where}.args must be an object")
    return orjson.dumps(value).decode()


class _Calls:
    """The conversation's function calls by id, so each functionResponse answers the call it
    names (by id, else the oldest unanswered call of that name)."""

    def __init__(self) -> None:
        self.open: list[tuple[str, str]] = []  # (id, name), not yet answered
        self.count = 0

    def call(self, part: dict[str, Any], where: str) -> dict[str, Any]:
        call = part["functionCall"]
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise RequestError(f"{where}.functionCall has no name")
        ident = str(call.get("id") or f"call_{self.count}")
        self.count += 1
        self.open.append((ident, call["name"]))
        return {"id": ident, "type": "function", "function": {
            "name": call["name"], "arguments": _arguments(call.get("args"), where)}}

    def response(self, part: dict[str, Any], where: str) -> dict[str, Any]:
        answer = part["functionResponse"]
        if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
            raise RequestError(f"{where}.functionResponse has no name")
        name, wanted = answer["name"], answer.get("id")
        found = next((c for c in self.open if c[0] == wanted), None) if wanted else None
        found = found or next((c for c in self.open if c[1] == name), None)
        if found is not None:
            self.open.remove(found)
        ident = found[0] if found else str(wanted or f"call_{name}")
        result = answer.get("response")
        text = orjson.dumps(result if result is not None else {}).decode()
        return {"role": "tool", "tool_call_id": ident, "name": name, "content": text}


def _content(content: Any, where: str, calls: _Calls) -> tuple[list[dict[str, Any]], int]:
    """One Content as chat messages: a model turn's functionCall parts become its
    tool_calls; a user turn's functionResponse parts become tool messages."""
    role = content.get("role") if isinstance(content, dict) else None
    if role not in (None, "user", "model", "function", "tool"):
        raise RequestError(f"{where}.role must be user or model, not {role!r}")
    parts = _parts(content, where)
    text, other = _text(parts)
    if role == "model":
        item: dict[str, Any] = {"role": "assistant", "content": text}
        tool_calls = [calls.call(p, f"{where}.parts[{i}]") for i, p in enumerate(parts)
                      if "functionCall" in p]
        if tool_calls:
            item["tool_calls"] = tool_calls
        return [item], other
    out = [calls.response(p, f"{where}.parts[{i}]") for i, p in enumerate(parts)
           if "functionResponse" in p]
    if text or not out:
        out.append({"role": "user", "content": text})
    return out, other


def _tools(raw: Any) -> tuple[dict[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RequestError("tools must be a list of Tool objects")
    out = []
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise RequestError(f"tools[{i}] must be an object")
        hosted = sorted(k for k in tool if k != "functionDeclarations")
        if hosted:  # googleSearch, codeExecution, urlContext: Google runs those, not a model
            raise RequestError(f"tools[{i}]: {', '.join(hosted)} cannot be served here (a "
                               "Google-hosted tool); only functionDeclarations can")
        declarations = tool.get("functionDeclarations")
        if declarations is not None and not isinstance(declarations, list):
            raise RequestError(f"tools[{i}].functionDeclarations must be a list")
        for j, declaration in enumerate(declarations or ()):
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"),
                                                                   str):
                raise RequestError(f"tools[{i}].functionDeclarations[{j}] has no name")
            schema = declaration.get("parametersJsonSchema")
            schema = schema if isinstance(schema, dict) else json_schema(
                declaration.get("parameters"))
            out.append({"type": "function", "function": {
                "name": declaration["name"],
                "description": str(declaration.get("description") or ""),
                "parameters": schema if isinstance(schema, dict) else EMPTY_PARAMETERS}})
    return tuple(out)


def _tool_choice(config: Any) -> Any:
    calling = config.get("functionCallingConfig") if isinstance(config, dict) else None
    if not isinstance(calling, dict):
        return None
    mode = calling.get("mode") or "AUTO"
    if not isinstance(mode, str):
        raise RequestError("toolConfig.functionCallingConfig.mode must be a string")
    mode = mode.upper()
    names = calling.get("allowedFunctionNames")
    if mode == "NONE":
        return "none"
    if mode in ("ANY", "VALIDATED") and isinstance(names, list) and len(names) == 1:
        return {"type": "function", "function": {"name": str(names[0])}}
    return "required" if mode == "ANY" else "auto"


def _number(config: dict[str, Any], key: str) -> float | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"generationConfig.{key} must be a number")
    return float(value)


def parse_request(body: Any, model: str = "", stream: bool = False) -> ChatRequest:
    """A generateContent body (the model and the method from its path) as a ChatRequest,
    or RequestError saying what cannot be served."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object")
    raw = body.get("contents")
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise RequestError("contents must be a non-empty list")
    messages: list[dict[str, Any]] = []
    other = 0
    system = body.get("systemInstruction", body.get("system_instruction"))
    if system:
        text, other = _text(_parts(system, "systemInstruction"))
        messages.append({"role": "system", "content": text})
    calls = _Calls()
    for i, content in enumerate(raw):
        items, parts = _content(content, f"contents[{i}]", calls)
        messages.extend(items)
        other += parts
    config = body.get("generationConfig")
    config = {} if config is None else config
    if not isinstance(config, dict):
        raise RequestError("generationConfig must be an object")
    candidates = config.get("candidateCount")
    if candidates not in (None, 1):
        raise RequestError(f"candidateCount {candidates!r} cannot be served: one candidate "
                           "per call")
    max_tokens = config.get("maxOutputTokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(
            max_tokens, int) or max_tokens < 1):
        raise RequestError("generationConfig.maxOutputTokens must be a positive integer")
    seed = config.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RequestError("generationConfig.seed must be an integer")
    stops = config.get("stopSequences")
    stops = [] if stops is None else stops
    if not isinstance(stops, list):
        raise RequestError("generationConfig.stopSequences must be a list of strings")
    return ChatRequest(
        model=model, messages=tuple(messages), tools=_tools(body.get("tools")),
        tool_choice=_tool_choice(body.get("toolConfig")), stream=stream, include_usage=True,
        max_tokens=max_tokens, temperature=_number(config, "temperature"),
        top_p=_number(config, "topP"),
        seed=seed, stop=tuple(s for s in stops if isinstance(s, str) and s),
        non_text_parts=other, raw=body, front="gemini")


def _error(message: str, status: int) -> dict[str, Any]:
    return {"error": {"code": status, "message": message,
                      "status": STATUS.get(status, "INTERNAL")}}


def error_body(message: str, status: int) -> bytes:
    return orjson.dumps(_error(message, status))


def sse_error(message: str) -> bytes:
    return b"data: " + error_body(message, 502) + b"\r\n\r\n"


class GeminiWriter:
    """A call's events as GenerateContentResponse chunks: text (and thought) parts as they
    come; a function call whole, once its arguments are (Gemini sends args as an object);
    the last chunk with finishReason and usageMetadata. `sse`: SSE `data:` lines, else the
    chunks as one JSON array written as it grows."""

    def __init__(self, request: ChatRequest, model: str, sse: bool = True) -> None:
        self.request, self.model, self.sse = request, model, sse
        self.parts: list[dict[str, Any]] = []  # every part, for the whole reply
        self.calls: dict[int, dict[str, Any]] = {}  # index -> name, arguments so far
        self.done: Done | None = None
        self.written = 0  # chunks written (the array's commas)

    def start(self) -> bytes:
        return b"" if self.sse else b"["

    def _chunk(self, data: dict[str, Any]) -> bytes:
        body = orjson.dumps(data)
        self.written += 1
        if self.sse:
            return b"data: " + body + b"\r\n\r\n"
        return (b",\r\n" if self.written > 1 else b"") + body

    def _response(self, parts: list[dict[str, Any]], last: bool = False) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        out: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model}
        if last:
            candidate["finishReason"] = self._finish()
            out["usageMetadata"] = self._usage()
        return out

    def event(self, event: Event) -> bytes:
        if isinstance(event, Text) and event.text:
            self._add({"text": event.text})
            return self._chunk(self._response([{"text": event.text}]))
        if isinstance(event, Reasoning) and event.text:
            self._add({"text": event.text, "thought": True})
            return self._chunk(self._response([{"text": event.text, "thought": True}]))
        if isinstance(event, ToolCallPart):
            call = self.calls.setdefault(event.index, {"name": "", "arguments": ""})
            call["name"] = call["name"] or event.name or ""
            call["arguments"] += event.arguments
            return b""
        if isinstance(event, Done):
            self.done = event
            calls = self._function_calls()
            self.parts.extend(calls)
            data = self._chunk(self._response(calls, last=True))
            return data if self.sse else data + b"]"
        return b""  # a pause, or an empty piece

    def _add(self, part: dict[str, Any]) -> None:
        last = self.parts[-1] if self.parts else None
        if last is not None and "text" in last and bool(last.get("thought")) == bool(
                part.get("thought")):
            last["text"] += part["text"]
        else:
            self.parts.append(dict(part))

    def _function_calls(self) -> list[dict[str, Any]]:
        out = []
        for index in sorted(self.calls):
            raw = self.calls[index]["arguments"]
            try:
                args = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                args = {"_unparsed": raw}  # what the model wrote, for the agent to refuse
            if not isinstance(args, dict):
                args = {"_unparsed": raw}
            out.append({"functionCall": {"name": self.calls[index]["name"], "args": args}})
        return out

    def _finish(self) -> str:
        reason = (self.done.finish_reason if self.done else None) or "stop"
        return FINISH.get(reason, "OTHER")

    def _usage(self) -> dict[str, int]:
        done = self.done
        prompt = (done.input_tokens or 0) if done else 0
        answer = (done.output_tokens or 0) if done else 0
        return {"promptTokenCount": prompt, "candidatesTokenCount": answer,
                "totalTokenCount": prompt + answer}

    def whole(self) -> dict[str, Any]:
        if self.done is None:
            self.parts.extend(self._function_calls())
        return self._response(self.parts, last=True)

    def stream_error(self, message: str) -> bytes:
        """An error inside a stream that already began, in the stream's own framing."""
        if self.sse:
            return sse_error(message)
        return (b",\r\n" if self.written else b"") + error_body(message, 502) + b"]"
