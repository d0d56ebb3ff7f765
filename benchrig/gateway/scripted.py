"""A scripted stand-in model: replays a fixed list of replies (text or tool calls), one per
call of a session, so an agent's multi-tool path runs deterministically behind the gateway."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchrig.gateway.call import (
    CallContext,
    ChatRequest,
    Done,
    Event,
    RequestError,
    Text,
    ToolCallPart,
)

PIECE = 4  # characters per streamed piece: about one token
SCHEME = "script:"


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """A script file: {"replies": [{"content": "…"} | {"tool_calls": [{"name", "arguments"}]}]}."""
    data = json.loads(Path(path).read_text())
    replies = data.get("replies") if isinstance(data, dict) else data
    if not isinstance(replies, list) or not replies:
        raise ValueError(f"{path}: a script needs a non-empty list of replies")
    for i, reply in enumerate(replies):
        if not isinstance(reply, dict) or not ("content" in reply or "tool_calls" in reply):
            raise ValueError(f"{path}: reply {i} needs content or tool_calls")
    return replies


def _tokens(text: str) -> int:
    return max(1, (len(text) + PIECE - 1) // PIECE)


class ScriptedBackend:
    """Reply n of the script answers call n of each session; past the end, a closing text.
    Its token counts are its own (`server`): a piece of PIECE characters is one token."""

    name = "scripted"

    def __init__(self, replies: list[dict[str, Any]], model: str = "scripted",
                 piece_delay_s: float = 0.0) -> None:
        self.replies, self.model, self.delay = replies, model, piece_delay_s

    def model_id(self, requested: str) -> str:
        return self.model

    def settings(self) -> dict[str, Any]:
        return {"server": "benchrig gateway", "backend": self.name, "model": self.model,
                "replies": len(self.replies)}

    def complete(self, request: ChatRequest, context: CallContext) -> Iterator[Event]:
        if request.tool_choice == "required" and not request.tools:
            raise RequestError("tool_choice required, but no tools were sent")
        reply = (self.replies[context.index] if context.index < len(self.replies)
                 else {"content": "(the script has no more replies)"})
        prompt = sum(_tokens(m["content"]) for m in request.messages)
        written = 0
        text = str(reply.get("content") or "")
        for start in range(0, len(text), PIECE):
            self._pause()
            yield Text(text[start:start + PIECE])
        written += _tokens(text) if text else 0
        for index, call in enumerate(reply.get("tool_calls") or []):
            arguments = call.get("arguments", {})
            arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
            self._pause()
            yield ToolCallPart(index, f"call_{context.index}_{index}", str(call["name"]))
            for start in range(0, len(arguments), 16):
                yield ToolCallPart(index, arguments=arguments[start:start + 16])
            written += _tokens(arguments)
        reason = "tool_calls" if reply.get("tool_calls") else "stop"
        yield Done(reason, input_tokens=prompt, output_tokens=written,
                   counters={"source": "scripted stand-in model", "reply": context.index})

    def _pause(self) -> None:
        if self.delay:
            time.sleep(self.delay)

    def close(self) -> None:
        pass
