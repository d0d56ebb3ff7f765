"""An OpenAI-compatible server as protocols.md §6–§8 document it: SSE chunks, a driver request."""

from __future__ import annotations

from typing import Any

from benchrig.core.settings import Settings
from benchrig.drivers.base import DriverRequest
from benchrig.prompt import render
from benchrig.spec import load_task
from tests.conftest import SOLUTIONS, TASKS, fenced
from tests.helpers.loopback import Reply, sse

GOOD = fenced((SOLUTIONS / "lru-cache.py").read_text(), before="Here it is.\n")
USAGE = {"prompt_tokens": 812, "completion_tokens": 57, "total_tokens": 869,
         "prompt_tokens_details": {"cached_tokens": 768}}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None,
          **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "c1", "object": "chat.completion.chunk", "choices": choices, **extra}


def rechunk(pieces: tuple[bytes, ...], size: int) -> tuple[bytes, ...]:
    data = b"".join(pieces)
    return tuple(data[i:i + size] for i in range(0, len(data), size))


def stream_reply(*chunks: dict[str, Any] | str, size: int = 0, **reply: Any) -> Reply:
    pieces = sse(*chunks)
    return Reply(rechunk(pieces, size) if size else pieces, content_type="text/event-stream",
                 **reply)


def request(url: str, model: str = "m", task: str = "lru-cache", **settings: Any
            ) -> DriverRequest:
    spec = load_task(TASKS / f"{task}.md")
    return DriverRequest(spec.view(), render(spec), model, url,
                         Settings(**{"timeout_s": 30.0, **settings}))

