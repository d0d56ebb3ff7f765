"""A gateway on a scripted back end, and an SSE reader, for the gateway's tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from benchrig.gateway import Gateway, Session
from benchrig.gateway.scripted import ScriptedBackend

WRITE = {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x = 1"}}]}
DONE = {"content": "Written."}


@contextmanager
def scripted(*replies: dict[str, Any], open_default: bool = False
             ) -> Iterator[tuple[Gateway, Session]]:
    with Gateway(ScriptedBackend(list(replies) or [DONE]), open_default=open_default) as gw:
        yield gw, gw.open_session("test")


def sse_chunks(response: httpx.Response) -> list[Any]:
    """Every `data:` payload of an SSE body, JSON-decoded ([DONE] kept as the string)."""
    out: list[Any] = []
    for block in response.text.split("\n\n"):
        if block.startswith("data: "):
            payload = block[len("data: "):]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def chat(url: str, **body: Any) -> httpx.Response:
    body.setdefault("model", "m")
    body.setdefault("messages", [{"role": "user", "content": "hi"}])
    return httpx.post(f"{url}/chat/completions", json=body, timeout=30, trust_env=False)
