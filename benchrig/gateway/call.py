"""What a back end yields for one model call, and the request every front hands it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class RequestError(Exception):
    """The request cannot be served as sent: HTTP 400 with this reason, never a 500."""


class BackendError(Exception):
    """The back end failed (unreachable, an error status, a broken stream): HTTP `status`."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ChatRequest:
    """One chat call in OpenAI's terms, whatever front it came through: messages with string
    content (roles system, user, assistant, tool), function tools with a parameters schema."""

    model: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: Any = None
    stream: bool = False
    include_usage: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    non_text_parts: int = 0  # image or audio parts a text-only back end cannot take
    raw: dict[str, Any] = field(default_factory=dict)  # the body as sent (for forwarding)
    front: str = "openai-chat"  # the API it came through: raw is that API's body


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Reasoning:
    text: str


@dataclass(frozen=True)
class ToolCallPart:
    """A piece of tool call `index`: `id` and `name` arrive once, `arguments` concatenate."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class Done:
    """The end of the call, with the back end's own counters where it has them."""

    finish_reason: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    prefill_ms: float | None = None  # the back end's prompt-processing time
    decode_ms: float | None = None  # its generation time (for a reply it sent whole)
    counters: dict[str, Any] = field(default_factory=dict)  # raw, as the back end gave them
    streamed: bool = True  # False: the back end answered whole (TTFT is the whole call)


@dataclass(frozen=True)
class Pause:
    """The back end is about to wait for more (an upstream read is used up): what it made
    so far leaves in one write, not one per event."""


Event = Text | Reasoning | ToolCallPart | Done | Pause


@dataclass(frozen=True)
class CallContext:
    """Which session a call belongs to and its number in it (from 0)."""

    session: str
    index: int
