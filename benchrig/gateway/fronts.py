"""The APIs the gateway speaks, by path: each reads a request into a ChatRequest and writes
a call's events back in its own shapes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchrig.gateway import anthropic, chat, responses
from benchrig.gateway.events import ChatRequest


@dataclass(frozen=True)
class Front:
    name: str
    parse: Callable[[Any], ChatRequest]
    writer: Callable[[ChatRequest, str], chat.Writer]
    error_body: Callable[[str, int], bytes]
    sse_error: Callable[[str], bytes]


CHAT = Front("openai-chat", chat.parse_request, chat.ChatWriter, chat.error_body,
             chat.sse_error)
MESSAGES = Front("anthropic-messages", anthropic.parse_request, anthropic.MessagesWriter,
                 anthropic.error_body, anthropic.sse_error)
RESPONSES = Front("openai-responses", responses.parse_request, responses.ResponsesWriter,
                  responses.error_body, responses.sse_error)
FRONTS = {"/v1/chat/completions": CHAT, "/chat/completions": CHAT,
          "/v1/messages": MESSAGES, "/v1/responses": RESPONSES, "/responses": RESPONSES}


def front_for(api: str) -> Front:
    """The front a path belongs to (for its error shape); the chat front by default."""
    return FRONTS.get(api) or (MESSAGES if api.startswith("/v1/messages") else CHAT)
