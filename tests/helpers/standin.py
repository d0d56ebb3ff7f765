"""A scripted stand-in model on 127.0.0.1 for the real agent CLIs: it records every request
and answers in the agent's own API (OpenAI chat, streamed or not; OpenAI Responses;
Anthropic Messages; Gemini generateContent) with a fixed script: first a tool call that
writes `solution.py`, then, once a tool result has come back, a final text."""

from __future__ import annotations

import contextlib
import json
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.helpers.serving import running

SOLUTIONS = Path(__file__).resolve().parents[1] / "fixtures" / "solutions"

SOLUTION = (SOLUTIONS / "lru-cache.py").read_text()
FINAL_TEXT = "I wrote solution.py."
# A shell command every agent's shell tool can run from its workspace.
WRITE_COMMAND = f"printf %s {shlex.quote(SOLUTION)} > solution.py"
SHELL_TOOLS = ("bash", "Bash", "run_shell_command", "shell", "exec_command", "shell_command",
               "local_shell")
WRITE_TOOLS = ("write", "Write", "write_file", "create_file")
USAGE = {"input": 100, "output": 20}  # what the stand-in reports; figures of record are not these


@dataclass(frozen=True)
class Seen:
    """One request as it arrived."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any
    t: float

    @property
    def size(self) -> int:
        return len(self.raw)


@dataclass(frozen=True)
class Call:
    """The tool call the script makes: a tool the agent offered, with its arguments."""

    name: str
    arguments: dict[str, Any]


def _fill(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a shell or write tool, filled from its JSON schema's property names."""
    props = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name, spec in props.items():
        kind = (spec or {}).get("type")
        low = name.lower()
        if low in ("command", "cmd", "script"):
            args[name] = ["bash", "-lc", WRITE_COMMAND] if kind == "array" else WRITE_COMMAND
        elif "path" in low or low in ("file", "filename"):
            args[name] = "solution.py"
        elif low in ("content", "contents", "text", "file_text"):
            args[name] = SOLUTION
        elif low == "description":
            args[name] = "write solution.py"
        elif name in (schema.get("required") or []):
            args[name] = {"string": "", "integer": 0, "number": 0, "boolean": False,
                          "array": [], "object": {}}.get(str(kind), "")
    return args


def choose(tools: list[tuple[str, dict[str, Any]]], prefer: tuple[str, ...] = SHELL_TOOLS
           ) -> Call | None:
    """The first offered tool named in `prefer` (a shell by default), else a write tool."""
    offered = dict(tools)
    for name in (*prefer, *SHELL_TOOLS, *WRITE_TOOLS):
        if name in offered:
            return Call(name, _fill(offered[name]))
    return None


def _openai_tools(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if fn.get("name"):
            found.append((fn["name"], fn.get("parameters") or {}))
    return found


def _gemini_tools(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(d["name"], d.get("parametersJsonSchema") or d.get("parameters") or {})
            for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]


def whole_edit(_: str) -> str:
    """aider's `whole` edit format: the file name, then the whole file in a fence."""
    return f"{FINAL_TEXT}\n\nsolution.py\n```python\n{SOLUTION}```\n"


def _tool_results(text: str) -> int:
    """How many tool results the request carries back, in any of the four APIs."""
    return sum(text.count(mark) for mark in ('"role": "tool"', '"role":"tool"',
                                             '"tool_result"', '"function_call_output"',
                                             '"functionResponse"'))


@dataclass
class StandIn:
    """`with StandIn() as model: model.url` — every request in `model.seen`."""

    prefer: tuple[str, ...] = SHELL_TOOLS
    plain_text: Callable[[str], str] | None = None  # a text-only agent's reply (aider)
    # an agent that ends on a command rather than a text (mini-swe-agent): the second call
    finish_command: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: dict(USAGE))  # what it claims
    refuse: int | None = None  # answer every model request with this HTTP status instead
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def model_requests(self) -> list[Seen]:
        """The requests that asked the model for something (not model lists, counts…)."""
        return [s for s in self.seen if s.method == "POST" and isinstance(s.body, dict)
                and any(k in s.body for k in ("messages", "input", "contents"))]

    @contextlib.contextmanager
    def serving(self) -> Iterator[StandIn]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        with running(server):
            yield self

    def __enter__(self) -> StandIn:
        self._cm = self.serving()
        return self._cm.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._cm.__exit__(*exc)

    # -- the script, per API --------------------------------------------------------------

    def decide(self, raw: str, tools: list[tuple[str, dict[str, Any]]]) -> Call | str:
        """A tool call while no tool result has come back, else the final text."""
        results = _tool_results(raw)
        if not tools or results > (0 if self.finish_command is None else 1):
            return self.plain_text(raw) if self.plain_text else FINAL_TEXT
        call = choose(tools, self.prefer)
        if call is not None and results and self.finish_command is not None:
            return Call(call.name, {k: (self.finish_command if k in ("command", "cmd") else v)
                                    for k, v in call.arguments.items()})
        return call if call is not None else FINAL_TEXT

    def reply(self, seen: Seen) -> tuple[int, str, list[bytes]]:
        path = seen.path.split("?")[0]
        body = seen.body if isinstance(seen.body, dict) else {}
        text = seen.raw.decode("utf-8", "replace")
        if self.refuse is not None and any(
                k in body for k in ("messages", "input", "contents")):
            return self.refuse, "application/json", [json.dumps({"error": {
                "message": "the stand-in refuses this request", "type": "invalid_request_error",
                "code": self.refuse, "status": "INVALID_ARGUMENT"}}).encode()]
        if path.endswith("/chat/completions"):
            return _openai_chat(self.decide(text, _openai_tools(body)), body, self.usage)
        if path.endswith("/responses"):
            return _responses(self.decide(text, _openai_tools(body)), body, self.usage)
        if path.endswith("/messages") and "messages" in body:
            return _anthropic(self.decide(text, _openai_tools(
                {"tools": [{"name": t.get("name"), "parameters": t.get("input_schema")}
                           for t in body.get("tools") or []]})), body, self.usage)
        if ":streamGenerateContent" in path or ":generateContent" in path:
            return _gemini(self.decide(text, _gemini_tools(body)), "stream" in path,
                           self.usage)
        if path.endswith(":countTokens") or path.endswith("/count_tokens"):
            return 200, "application/json", [json.dumps(
                {"totalTokens": len(text) // 4, "input_tokens": len(text) // 4}).encode()]
        if path.endswith("/models"):
            return 200, "application/json", [json.dumps(
                {"object": "list", "data": [{"id": "smollm2", "object": "model"}]}).encode()]
        return 404, "application/json", [b'{"error": {"message": "not served here"}}']


def _sse(events: list[Any], named: bool = False) -> list[bytes]:
    out = []
    for event in events:
        data = json.dumps(event).encode()
        head = f"event: {event['type']}\n".encode() if named else b""
        out.append(head + b"data: " + data + b"\n\n")
    return out


def _openai_chat(step: Call | str, body: dict[str, Any], usage_: dict[str, int]
                 ) -> tuple[int, str, list[bytes]]:
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0,
            "model": body.get("model", "smollm2")}
    usage = {"prompt_tokens": usage_["input"], "completion_tokens": usage_["output"],
             "total_tokens": usage_["input"] + usage_["output"]}
    if isinstance(step, Call):
        call = {"id": "call_standin_1", "type": "function",
                "function": {"name": step.name, "arguments": json.dumps(step.arguments)}}
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": step}, "stop"
    if not body.get("stream"):
        return 200, "application/json", [json.dumps({
            **base, "object": "chat.completion", "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}).encode()]
    chunks: list[Any] = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"},
                                               "finish_reason": None}]}]
    if isinstance(step, Call):
        args = json.dumps(step.arguments)
        half = len(args) // 2
        chunks.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {
            "tool_calls": [{"index": 0, "id": "call_standin_1", "type": "function",
                            "function": {"name": step.name, "arguments": args[:half]}}]}}]})
        chunks.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {
            "tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]}}]})
    else:
        for word in step.split(" "):
            chunks.append({**base, "choices": [{"index": 0, "finish_reason": None,
                                                "delta": {"content": word + " "}}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({**base, "choices": [], "usage": usage})
    return 200, "text/event-stream", [*_sse(chunks), b"data: [DONE]\n\n"]


def _responses(step: Call | str, body: dict[str, Any], usage_: dict[str, int]
               ) -> tuple[int, str, list[bytes]]:
    resp = {"id": "resp_standin", "object": "response", "model": body.get("model", "smollm2"),
            "status": "in_progress", "output": []}
    if isinstance(step, Call):
        item: dict[str, Any] = {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                                "name": step.name, "arguments": json.dumps(step.arguments),
                                "status": "completed"}
        deltas = [{"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                   "output_index": 0, "delta": item["arguments"]}]
    else:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": step, "annotations": []}]}
        deltas = [{"type": "response.output_text.delta", "item_id": "msg_1",
                   "output_index": 0, "content_index": 0, "delta": step}]
    usage = {"input_tokens": usage_["input"], "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": usage_["output"],
             "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": usage_["input"] + usage_["output"]}
    events = [{"type": "response.created", "response": resp},
              {"type": "response.output_item.added", "output_index": 0,
               "item": {**item, "status": "in_progress"}},
              *deltas,
              {"type": "response.output_item.done", "output_index": 0, "item": item},
              {"type": "response.completed", "response": {
                  **resp, "status": "completed", "output": [item], "usage": usage}}]
    return 200, "text/event-stream", _sse(events, named=True)


def _anthropic(step: Call | str, body: dict[str, Any], usage_: dict[str, int]
               ) -> tuple[int, str, list[bytes]]:
    message = {"id": "msg_standin", "type": "message", "role": "assistant", "content": [],
               "model": body.get("model", "smollm2"), "stop_reason": None,
               "stop_sequence": None,
               "usage": {"input_tokens": usage_["input"], "output_tokens": 1}}
    if isinstance(step, Call):
        block: dict[str, Any] = {"type": "tool_use", "id": "toolu_standin_1",
                                 "name": step.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step.arguments)}
        stop = "tool_use"
    else:
        block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta",
                                                            "text": step}, "end_turn"
    if not body.get("stream"):
        full = ({**block, "input": step.arguments} if isinstance(step, Call)
                else {"type": "text", "text": step})
        return 200, "application/json", [json.dumps({
            **message, "content": [full], "stop_reason": stop,
            "usage": {"input_tokens": usage_["input"], "output_tokens": usage_["output"]}}
        ).encode()]
    events = [{"type": "message_start", "message": message},
              {"type": "content_block_start", "index": 0, "content_block": block},
              {"type": "content_block_delta", "index": 0, "delta": delta},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
               "usage": {"output_tokens": usage_["output"]}},
              {"type": "message_stop"}]
    return 200, "text/event-stream", _sse(events, named=True)


def _gemini(step: Call | str, stream: bool, usage_: dict[str, int]
            ) -> tuple[int, str, list[bytes]]:
    part: dict[str, Any] = ({"functionCall": {"name": step.name, "args": step.arguments}}
                            if isinstance(step, Call) else {"text": step})
    reply = {"candidates": [{"content": {"role": "model", "parts": [part]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": usage_["input"],
                               "candidatesTokenCount": usage_["output"],
                               "totalTokenCount": usage_["input"] + usage_["output"]},
             "modelVersion": "smollm2"}
    if stream:
        return 200, "text/event-stream", _sse([reply])
    return 200, "application/json", [json.dumps(reply).encode()]


def _handler(owner: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = self._read_chunked()
            else:
                raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            seen = Seen(self.command, self.path, {k.lower(): v for k, v in
                                                  self.headers.items()}, raw, body,
                        time.monotonic())
            with owner.lock:
                owner.seen.append(seen)
            status, kind, pieces = owner.reply(seen)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(sum(map(len, pieces))))
            self.end_headers()
            with contextlib.suppress(ConnectionError):
                for piece in pieces:
                    self.wfile.write(piece)
                    self.wfile.flush()

        def _read_chunked(self) -> bytes:
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()

        do_GET = do_POST = do_HEAD = do_PUT = _serve

    return Handler
