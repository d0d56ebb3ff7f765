"""The OpenAI Responses front (`POST /v1/responses`, what Codex speaks): instructions, input
messages, function_call and function_call_output items read into a ChatRequest; a call's
events written back as Responses stream events or one response object. Stateless: a
`previous_response_id` is refused (the agent sends the whole conversation)."""

from __future__ import annotations

import time
from typing import Any

import orjson

from benchrig.gateway.call import (
    ChatRequest,
    Done,
    Event,
    RequestError,
    Text,
    ToolCallPart,
)
from benchrig.gateway.chat import EMPTY_PARAMETERS, ROLES, text_of


def _input(raw: Any) -> tuple[list[dict[str, Any]], int]:
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}], 0
    if not isinstance(raw, list) or not raw:
        raise RequestError("input must be a string or a non-empty list of items")
    out: list[dict[str, Any]] = []
    other = 0
    names: dict[str, str] = {}
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise RequestError(f"{where} is not an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = ROLES.get(str(item.get("role")))
            if role is None or role == "tool":
                raise RequestError(f"{where}.role must be user, assistant, system or "
                                   "developer")
            text, parts = text_of(item.get("content"), where)
            other += parts
            out.append({"role": role, "content": text})
        elif kind == "function_call":
            call: dict[str, Any] = {
                "id": str(item.get("call_id") or f"call_{i}"), "type": "function",
                    "function": {"name": str(item.get("name") or ""),
                                 "arguments": str(item.get("arguments") or "{}")}}
            names[call["id"]] = call["function"]["name"]
            # an assistant's text and the calls after it are one turn
            if out and out[-1]["role"] == "assistant":
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            call_id = str(item.get("call_id") or "")
            output = item.get("output")
            text = output if isinstance(output, str) else text_of(output, where)[0]
            out.append({"role": "tool", "tool_call_id": call_id, "content": text,
                        "name": names.get(call_id, "tool")})
        # reasoning items and others carry nothing a stateless model call needs
    if not out:
        raise RequestError("input holds no message")
    return out, other


def _tools(raw: Any) -> tuple[dict[str, Any], ...]:
    """Function tools (flat, as Responses sends them); built-in tool types are not offered
    to the model (the gateway cannot run them)."""
    tools = []
    for i, tool in enumerate(raw or ()):
        if not isinstance(tool, dict):
            raise RequestError(f"tools[{i}] is not an object")
        if tool.get("type") != "function":
            continue
        if not isinstance(tool.get("name"), str):
            raise RequestError(f"tools[{i}] has no name")
        parameters = tool.get("parameters")
        tools.append({"type": "function", "function": {
            "name": tool["name"], "description": str(tool.get("description") or ""),
            "parameters": parameters if isinstance(parameters, dict) else EMPTY_PARAMETERS}})
    return tuple(tools)


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": str(choice.get("name") or "")}}
    return choice if choice in ("auto", "none", "required") else None


def parse_request(body: Any) -> ChatRequest:
    """A /v1/responses body as a ChatRequest, or RequestError saying what is wrong."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object")
    if body.get("previous_response_id"):
        raise RequestError("previous_response_id is not supported: this gateway keeps no "
                           "responses; send the whole conversation as input")
    messages, other = _input(body.get("input"))
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.insert(0, {"role": "system", "content": body["instructions"]})
    limit = body.get("max_output_tokens")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise RequestError("max_output_tokens must be a positive integer")
    temperature, top_p = body.get("temperature"), body.get("top_p")
    return ChatRequest(
        model=str(body.get("model") or ""), messages=tuple(messages),
        tools=_tools(body.get("tools")), tool_choice=_tool_choice(body.get("tool_choice")),
        stream=bool(body.get("stream")), include_usage=True, max_tokens=limit,
        temperature=temperature if isinstance(temperature, int | float) else None,
        top_p=top_p if isinstance(top_p, int | float) else None, non_text_parts=other,
        raw=body, front="openai-responses")


class ResponsesWriter:
    """A call's events as Responses stream events, each with its sequence_number."""

    def __init__(self, request: ChatRequest, model: str) -> None:
        self.request, self.model = request, model
        self.id = f"resp_{time.time_ns():x}"
        self.created = int(time.time())
        self.items: list[dict[str, Any]] = []
        self.open: tuple[str, int] | None = None
        self.sequence = 0
        self.done: Done | None = None

    def _event(self, kind: str, **data: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self.sequence, **data}
        self.sequence += 1
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"

    def _response(self, status: str) -> dict[str, Any]:
        response: dict[str, Any] = {
            "id": self.id, "object": "response", "created_at": self.created,
            "status": status, "model": self.model, "output": self.items if status !=
            "in_progress" else [], "usage": None, "error": None,
            "incomplete_details": None}
        if self.done is not None:
            inputs, outputs = self.done.input_tokens or 0, self.done.output_tokens or 0
            response["usage"] = {
                "input_tokens": inputs, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": outputs, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": inputs + outputs}
            if self.done.finish_reason == "length":
                response["incomplete_details"] = {"reason": "max_output_tokens"}
        return response

    def start(self) -> bytes:
        return (self._event("response.created", response=self._response("in_progress"))
                + self._event("response.in_progress", response=self._response("in_progress")))

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        self.open = None
        index = len(self.items) - 1
        item = self.items[index]
        item["status"] = "completed"
        if item["type"] == "message":
            part = item["content"][0]
            out = (self._event("response.output_text.done", item_id=item["id"],
                               output_index=index, content_index=0, text=part["text"])
                   + self._event("response.content_part.done", item_id=item["id"],
                                 output_index=index, content_index=0, part=part))
        else:
            out = self._event("response.function_call_arguments.done", item_id=item["id"],
                              output_index=index, arguments=item["arguments"])
        return out + self._event("response.output_item.done", output_index=index, item=item)

    def _open(self, kind: str, tool: int, item: dict[str, Any]) -> bytes:
        if self.open == (kind, tool):
            return b""
        out = self._close()
        self.items.append(item)
        self.open = (kind, tool)
        index = len(self.items) - 1
        out += self._event("response.output_item.added", output_index=index,
                           item={**item, "content": []} if kind == "message" else dict(item))
        if kind == "message":
            out += self._event("response.content_part.added", item_id=item["id"],
                               output_index=index, content_index=0,
                               part={"type": "output_text", "text": "", "annotations": []})
        return out

    def event(self, event: Event) -> bytes:
        index = len(self.items)
        if isinstance(event, Text) and event.text:
            out = self._open("message", -1, {
                "id": f"msg_{self.id[5:]}_{index}", "type": "message", "role": "assistant",
                "status": "in_progress",
                "content": [{"type": "output_text", "text": "", "annotations": []}]})
            item = self.items[-1]
            item["content"][0]["text"] += event.text
            return out + self._event("response.output_text.delta", item_id=item["id"],
                                     output_index=len(self.items) - 1, content_index=0,
                                     delta=event.text)
        if isinstance(event, ToolCallPart):
            out = self._open("call", event.index, {
                "id": f"fc_{self.id[5:]}_{index}", "type": "function_call",
                "status": "in_progress", "call_id": event.id or f"call_{self.id[5:]}_{index}",
                "name": event.name or "", "arguments": ""})
            if not event.arguments:
                return out
            item = self.items[-1]
            item["arguments"] += event.arguments
            return out + self._event("response.function_call_arguments.delta",
                                     item_id=item["id"], output_index=len(self.items) - 1,
                                     delta=event.arguments)
        if isinstance(event, Done):
            self.done = event
            status = "incomplete" if event.finish_reason == "length" else "completed"
            return self._close() + self._event(f"response.{status}",
                                               response=self._response(status))
        return b""  # a pause, reasoning (not passed on), or an empty piece

    def whole(self) -> dict[str, Any]:
        self._close()
        done = self.done
        return self._response("incomplete" if done and done.finish_reason == "length"
                              else "completed")


def error_body(message: str, status: int) -> bytes:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return orjson.dumps({"error": {"message": message, "type": kind, "code": status}})


def sse_error(message: str) -> bytes:
    return (b"event: error\ndata: " + orjson.dumps({"type": "error", "message": message})
            + b"\n\n")
