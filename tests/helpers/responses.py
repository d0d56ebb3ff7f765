"""A scripted OpenAI Responses API stand-in on 127.0.0.1 for the real Codex CLI (tests only):
its first reply asks for one shell tool call that writes `solution.py` and prints a marker,
every later reply is a final text. Every request is kept, so a test sees the tool's output
that Codex sent back."""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.helpers.serving import running

SOLUTION = (Path(__file__).resolve().parents[1] / "fixtures" / "solutions" /
            "lru-cache.py").read_text()
MARKER = "ran-in-the-workspace"
COMMAND = f"printf %s {shlex.quote(SOLUTION)} > solution.py && echo {MARKER} && pwd"
SHELL_TOOLS = ("shell", "exec_command", "shell_command", "local_shell")
FINAL = "I wrote solution.py."


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """The shell command in whichever argument the tool's schema names for it."""
    for name, spec in (schema.get("properties") or {}).items():
        if name in ("command", "cmd"):
            array = (spec or {}).get("type") == "array"
            return {name: ["bash", "-lc", COMMAND] if array else COMMAND}
    return {"command": ["bash", "-lc", COMMAND]}


def _tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = {}
    for tool in body.get("tools") or []:
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if name:
            found[name] = tool.get("parameters") or {}
    return found


def reply(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The SSE events of one streamed Responses reply: a shell call first, then a text."""
    asked = json.dumps(body)
    tools = _tools(body)
    shell = next((name for name in SHELL_TOOLS if name in tools), None)
    if shell is not None and "function_call_output" not in asked:
        item: dict[str, Any] = {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                                "name": shell, "status": "completed",
                                "arguments": json.dumps(_arguments(tools[shell]))}
    else:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "model": body.get("model"),
                "status": "in_progress", "output": []}
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 120}
    return [{"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0,
             "item": {**item, "status": "in_progress"}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {**response, "status": "completed",
                                                        "output": [item], "usage": usage}}]


@dataclass
class Responses:
    """`with Responses().serving() as model: model.url` (…/v1) — requests in `model.seen`."""

    seen: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    @contextlib.contextmanager
    def serving(self) -> Iterator[Responses]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        with running(server):
            yield self

    def tool_outputs(self) -> list[str]:
        """What Codex sent back of the tool calls' outputs."""
        return [str(item.get("output")) for body in self.seen
                for item in body.get("input") or [] if isinstance(item, dict)
                and item.get("type") == "function_call_output"]


def _handler(owner: Responses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            owner.seen.append(body)
            if not self.path.endswith("/responses"):
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                            for e in reply(body))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler
