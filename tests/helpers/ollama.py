"""An Ollama server as protocols.md §5 documents it: /api/chat lines, routes, a driver request."""

from __future__ import annotations

import re
import time
from typing import Any

from benchrig.core.settings import Settings
from benchrig.drivers.base import DriverRequest
from benchrig.prompt import render
from benchrig.spec import load_task
from tests.conftest import SOLUTIONS, TASKS, fenced
from tests.helpers.loopback import Reply, ndjson

MODEL = "qwen3"
# What /api/tags lists (preflight asks before any attempt)
TAGS = {"models": [{"name": f"{MODEL}:latest", "model": f"{MODEL}:latest"}]}
GOOD = fenced((SOLUTIONS / "lru-cache.py").read_text(), before="Here it is.\n")
FINAL = {"total_duration": 4883583458, "load_duration": 1334875, "prompt_eval_count": 26,
         "prompt_eval_duration": 342546000, "eval_count": 282, "eval_duration": 4535599000}


def line(content: str = "", thinking: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    return {"model": MODEL, "created_at": "2026-11-30T10:00:00.000000Z", "message": message,
            "done": False, **extra}


def done(reason: str = "stop", **counters: Any) -> dict[str, Any]:
    return {**line(), "done": True, "done_reason": reason, **(counters or FINAL)}


def pieces_of(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


THINKING = ["Let me", " think about", " an OrderedDict — voilà."]
ANSWER_LINES = [line(thinking=t) for t in THINKING] + [line(p) for p in pieces_of(GOOD, 9)]


def rechunk(pieces: tuple[bytes, ...], size: int) -> tuple[bytes, ...]:
    """The same bytes in reads of `size`: lines split anywhere, several lines per read."""
    data = b"".join(pieces)
    return tuple(data[i:i + size] for i in range(0, len(data), size))


def routes(chat: Reply, capabilities: tuple[str, ...] = ("completion", "thinking"),
           loaded: list[dict[str, Any]] | None = None) -> dict[tuple[str, str], Any]:
    ps = {"models": loaded if loaded is not None else [
        {"name": f"{MODEL}:latest", "model": f"{MODEL}:latest", "size": 6654289920,
         "size_vram": 0, "context_length": 4096}]}

    def chat_route(body: Any) -> Reply:
        if not body.get("messages"):  # a load-only request (the untimed warm-up)
            return Reply.json({"model": MODEL, "created_at": "2026-11-30T10:00:00Z",
                               "message": {"role": "assistant", "content": ""},
                               "done_reason": "load", "done": True})
        return chat

    return {
        ("GET", "/api/tags"): Reply.json(TAGS),
        ("GET", "/api/version"): Reply.json({"version": "0.13.5"}),
        ("POST", "/api/show"): Reply.json({"capabilities": list(capabilities),
                                           "model_info": {"qwen3.context_length": 40960}}),
        ("GET", "/api/ps"): Reply.json(ps),
        ("POST", "/api/chat"): chat_route,
    }


def request(task: str = "lru-cache", url: str | None = None,
            **settings: Any) -> DriverRequest:
    spec = load_task(TASKS / f"{task}.md")
    return DriverRequest(spec.view(), render(spec), MODEL, url,
                         Settings(**{"timeout_s": 30.0, **settings}))



def tool_reply(content: str = "", calls: list[dict[str, Any]] | None = None,
               **counters: Any) -> dict[str, Any]:
    """A non-streamed /api/chat reply (protocols.md §5): a call arrives whole, its arguments
    an object, and done_reason stays `stop`."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls is not None:
        message["tool_calls"] = [{"function": {"name": name, "arguments": arguments}}
                                 for name, arguments in calls]
    return {"model": MODEL, "created_at": "2026-11-30T10:00:00Z", "message": message,
            "done": True, "done_reason": "stop", **(counters or FINAL)}


def tool_routes(replies: list[dict[str, Any]],
                capabilities: tuple[str, ...] = ("completion", "tools")
                ) -> dict[tuple[str, str], Any]:
    """Ollama answering a tool conversation: one reply per /api/chat request with messages,
    in order (the load-only warm-up gets the load reply)."""
    left = list(replies)

    def chat(body: Any) -> Reply:
        if not body.get("messages"):
            return Reply.json({"model": MODEL, "created_at": "2026-11-30T10:00:00Z",
                               "message": {"role": "assistant", "content": ""},
                               "done_reason": "load", "done": True})
        return Reply.json(left.pop(0))

    found = routes(Reply(), capabilities)
    found[("POST", "/api/chat")] = chat
    return found


class ContextStandIn:
    """An Ollama that keeps one model loaded at one `num_ctx`, as protocols.md §5 documents:
    a request with another `num_ctx` reloads it (`load_seconds`, reported in
    `load_duration`), a load-only request (no messages) only loads; `/api/ps` reports its
    `size` growing with the window and `size_vram` below `size` from `spill_at` on (the KV
    cache no longer fits the GPU); `/api/show` gives the trained context. A chat answers
    with the code of the needle in its prompt, and its last line carries the duration
    counters (prompt tokens: 4 characters each)."""

    GIB = 1024 ** 3

    def __init__(self, spill_at: int, trained: int = 8192, load_seconds: float = 0.15,
                 vram_bytes: int = 3 * 1024 ** 3) -> None:
        self.spill_at, self.trained, self.load_seconds = spill_at, trained, load_seconds
        self.vram = vram_bytes
        self.loaded: int | None = None
        self.log: list[tuple[str, int]] = []  # ("load" | "warm" | "chat", num_ctx)
        self.reloads_by_chat: list[int] = []

    def size(self, num_ctx: int) -> int:
        return 2 * self.GIB + num_ctx * 128 * 1024  # weights, then the KV cache per token

    def _load(self, num_ctx: int) -> int:
        time.sleep(self.load_seconds)
        self.loaded = num_ctx
        return int(self.load_seconds * 1e9)

    def ps(self, _: Any) -> Reply:
        if self.loaded is None:
            return Reply.json({"models": []})
        size = self.size(self.loaded)
        vram = size if self.loaded < self.spill_at else min(self.vram, size - 1)
        return Reply.json({"models": [{"name": f"{MODEL}:latest", "model": f"{MODEL}:latest",
                                       "size": size, "size_vram": vram,
                                       "context_length": self.loaded}]})

    def chat(self, body: Any) -> Reply:
        num_ctx = int(body.get("options", {}).get("num_ctx", 2048))
        messages = body.get("messages") or []
        load_ns = 1_000_000
        if num_ctx != self.loaded:
            load_ns = self._load(num_ctx)
            if messages:
                self.reloads_by_chat.append(num_ctx)
        if not messages:
            self.log.append(("load", num_ctx))
            return Reply.json({"model": MODEL, "created_at": "2026-11-30T10:00:00Z",
                               "message": {"role": "assistant", "content": ""},
                               "done_reason": "load", "done": True,
                               "load_duration": load_ns})
        prompt = str(messages[-1].get("content", ""))
        self.log.append(("warm" if len(prompt) < 40 else "chat", num_ctx))
        code = re.search(r"code is (\d+)", prompt)
        answer = code.group(1) if code else "OK"
        tokens = -(-len(prompt) // 4) + 10  # the chat template adds its own tokens
        counters = {"total_duration": 9_000_000 + tokens * 1000, "load_duration": load_ns,
                    "prompt_eval_count": tokens, "prompt_eval_duration": tokens * 1000,
                    "eval_count": 3, "eval_duration": 3_000_000}
        return Reply(ndjson(line(answer[:3]), line(answer[3:]), done("stop", **counters)),
                     content_type="application/x-ndjson")

    def routes(self) -> dict[tuple[str, str], Any]:
        return {("GET", "/api/tags"): Reply.json(TAGS),
                ("GET", "/api/version"): Reply.json({"version": "0.13.5"}),
                ("POST", "/api/show"): Reply.json({
                    "capabilities": ["completion"],
                    "model_info": {"qwen3.context_length": self.trained}}),
                ("GET", "/api/ps"): self.ps,
                ("POST", "/api/chat"): self.chat}
