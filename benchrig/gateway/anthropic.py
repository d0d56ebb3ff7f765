"""The Anthropic Messages front (`POST /v1/messages`, what Claude Code speaks through
ANTHROPIC_BASE_URL): system, text, tool_use and tool_result blocks read into a ChatRequest;
a call's events written back as Messages SSE events (protocols.md §6) or one message."""

from __future__ import annotations

import time
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

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise RequestError(f"{where}.content must be a string or a list of blocks")
    return content


def _text(blocks: list[dict[str, Any]]) -> tuple[str, int]:
    texts, other = [], 0
    for block in blocks:
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") in ("image", "document"):
            other += 1
    return "".join(texts), other


def _message(message: Any, where: str) -> tuple[list[dict[str, Any]], int]:
    """One Messages message as chat messages: a user's tool_result blocks become tool
    messages; an assistant's tool_use blocks become its tool_calls."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant",
                                                                    "system"):
        raise RequestError(f"{where}.role must be user, assistant or system")
    blocks = _blocks(message.get("content"), where)
    out: list[dict[str, Any]] = []
    other = 0
    if message["role"] == "system":  # Claude Code 2.x sends some in the conversation
        text, other = _text(blocks)
        return [{"role": "system", "content": text}], other
    if message["role"] == "assistant":
        text, other = _text(blocks)
        item: dict[str, Any] = {"role": "assistant", "content": text}
        calls = [{"id": str(b.get("id") or f"toolu_{i}"), "type": "function", "function": {
            "name": str(b.get("name") or ""), "arguments": orjson.dumps(
                b.get("input") or {}).decode()}}
            for i, b in enumerate(blocks) if b.get("type") == "tool_use"]
        if calls:
            item["tool_calls"] = calls
        return [item], other
    plain = [b for b in blocks if b.get("type") != "tool_result"]
    for block in blocks:
        if block.get("type") == "tool_result":
            result = block.get("content")
            text, parts = (result, 0) if isinstance(result, str) else _text(
                _blocks(result, where))
            other += parts
            out.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""),
                        "content": text})
    if plain or not out:
        text, parts = _text(plain)
        other += parts
        out.append({"role": "user", "content": text})
    return out, other


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return None
    kind = choice.get("type")
    if kind == "any":
        return "required"
    if kind == "tool":
        return {"type": "function", "function": {"name": str(choice.get("name") or "")}}
    return "none" if kind == "none" else "auto"


def parse_request(body: Any) -> ChatRequest:
    """A /v1/messages body as a ChatRequest, or RequestError saying what is wrong."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise RequestError("messages must be a non-empty list")
    messages: list[dict[str, Any]] = []
    other = 0
    system = body.get("system")
    if system:
        text, parts = _text(_blocks(system, "system"))
        messages.append({"role": "system", "content": text})
        other += parts
    names: dict[str, str] = {}
    for i, message in enumerate(raw):
        items, parts = _message(message, f"messages[{i}]")
        other += parts
        for item in items:
            for call in item.get("tool_calls") or ():
                names[call["id"]] = call["function"]["name"]
            if item["role"] == "tool":
                item["name"] = names.get(item["tool_call_id"], "tool")
        messages.extend(items)
    tools = []
    for i, tool in enumerate(body.get("tools") or ()):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise RequestError(f"tools[{i}] has no name")
        schema = tool.get("input_schema")
        tools.append({"type": "function", "function": {
            "name": tool["name"], "description": str(tool.get("description") or ""),
            "parameters": schema if isinstance(schema, dict) else EMPTY_PARAMETERS}})
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise RequestError("max_tokens must be a positive integer")
    stops = body.get("stop_sequences") or ()
    return ChatRequest(
        model=str(body.get("model") or ""), messages=tuple(messages), tools=tuple(tools),
        tool_choice=_tool_choice(body.get("tool_choice")), stream=bool(body.get("stream")),
        include_usage=True, max_tokens=max_tokens,
        temperature=body.get("temperature") if isinstance(body.get("temperature"),
                                                          int | float) else None,
        top_p=body.get("top_p") if isinstance(body.get("top_p"), int | float) else None,
        stop=tuple(s for s in stops if isinstance(s, str) and s), non_text_parts=other,
        raw=body, front="anthropic-messages")


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) \
        + b"\n\n"


class MessagesWriter:
    """A call's events as Messages SSE: message_start, per block content_block_start /
    _delta / _stop, message_delta (stop_reason, usage), message_stop."""

    def __init__(self, request: ChatRequest, model: str) -> None:
        self.request, self.model = request, model
        self.id = f"msg_{time.time_ns():x}"
        self.blocks: list[dict[str, Any]] = []
        self.open: tuple[str, int] | None = None  # (kind, tool index) of the open block
        self.done: Done | None = None

    def start(self) -> bytes:
        return _event("message_start", {"message": {
            "id": self.id, "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0}}})

    def _switch(self, kind: str, tool: int, block: dict[str, Any]) -> bytes:
        if self.open == (kind, tool):
            return b""
        out = self._close()
        self.blocks.append(block)
        self.open = (kind, tool)
        shown = {k: v for k, v in block.items() if not k.startswith("_")}
        return out + _event("content_block_start", {"index": len(self.blocks) - 1,
                                                    "content_block": shown})

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        self.open = None
        return _event("content_block_stop", {"index": len(self.blocks) - 1})

    def event(self, event: Event) -> bytes:
        index = len(self.blocks)
        if isinstance(event, Text) and event.text:
            out = self._switch("text", -1, {"type": "text", "text": ""})
            self.blocks[-1]["text"] += event.text
            return out + _event("content_block_delta", {"index": len(self.blocks) - 1,
                                "delta": {"type": "text_delta", "text": event.text}})
        if isinstance(event, Reasoning) and event.text:
            out = self._switch("thinking", -1, {"type": "thinking", "thinking": ""})
            self.blocks[-1]["thinking"] += event.text
            return out + _event("content_block_delta", {"index": len(self.blocks) - 1,
                                "delta": {"type": "thinking_delta", "thinking": event.text}})
        if isinstance(event, ToolCallPart):
            out = self._switch("tool", event.index, {
                "type": "tool_use", "id": event.id or f"toolu_{self.id[-8:]}_{index}",
                "name": event.name or "", "input": {}, "_json": ""})
            if not event.arguments:
                return out
            self.blocks[-1]["_json"] += event.arguments
            return out + _event("content_block_delta", {"index": len(self.blocks) - 1,
                                "delta": {"type": "input_json_delta",
                                          "partial_json": event.arguments}})
        if isinstance(event, Done):
            self.done = event
            return self._close() + _event("message_delta", {
                "delta": {"stop_reason": self._stop_reason(), "stop_sequence": None},
                "usage": self._usage()}) + _event("message_stop", {})
        return b""  # a pause, or an empty piece

    def _stop_reason(self) -> str:
        reason = (self.done.finish_reason if self.done else None) or "stop"
        if any(b["type"] == "tool_use" for b in self.blocks):
            return "tool_use"
        return STOP_REASONS.get(reason, "end_turn")

    def _usage(self) -> dict[str, int]:
        done = self.done
        return {"input_tokens": (done.input_tokens or 0) if done else 0,
                "output_tokens": (done.output_tokens or 0) if done else 0}

    def whole(self) -> dict[str, Any]:
        content = []
        for block in self.blocks:
            if block["type"] == "tool_use":
                raw = block.pop("_json", "")
                try:
                    block["input"] = orjson.loads(raw) if raw else {}
                except orjson.JSONDecodeError:
                    block["input"] = {"_unparsed": raw}
            content.append(block)
        return {"id": self.id, "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": self._stop_reason(),
                "stop_sequence": None, "usage": self._usage()}


def error_body(message: str, status: int) -> bytes:
    kind = "invalid_request_error" if status < 500 else "api_error"
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


def sse_error(message: str) -> bytes:
    return b"event: error\ndata: " + error_body(message, 502) + b"\n\n"
