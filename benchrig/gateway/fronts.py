"""The APIs the gateway speaks, by path: each reads a request into a ChatRequest and writes
a call's events back in its own shapes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from benchrig.gateway import anthropic, chat, responses
from benchrig.gateway import gemini_front as gemini
from benchrig.gateway.call import ChatRequest


@dataclass(frozen=True)
class Front:
    name: str
    parse: Callable[[Any], ChatRequest]
    writer: Callable[[ChatRequest, str], chat.Writer]
    error_body: Callable[[str, int], bytes]
    sse_error: Callable[[str], bytes]
    stream_type: str = "text/event-stream"


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
    if gemini.ANY_PATH.match(api):
        return Front("gemini", gemini.parse_request, gemini.GeminiWriter, gemini.error_body,
                     gemini.sse_error)
    return FRONTS.get(api) or (MESSAGES if api.startswith("/v1/messages") else CHAT)


def gemini_front(api: str, query: str) -> Front | None:
    """The Gemini front for one request: its model and method are in the path, its stream
    framing in the query (`alt=sse`: SSE, else a JSON array); None for another path."""
    found = gemini.PATH.match(api)
    if found is None:
        return None
    model, method = found.group(1), found.group(2)
    stream = method == "streamGenerateContent"
    sse = "sse" in parse_qs(query).get("alt", ())
    made: list[gemini.GeminiWriter] = []

    def writer(request: ChatRequest, served: str) -> chat.Writer:
        made.append(gemini.GeminiWriter(request, served, sse=sse or not stream))
        return made[-1]

    def stream_error(message: str) -> bytes:
        return made[-1].stream_error(message) if made else gemini.sse_error(message)

    return Front("gemini", lambda body: gemini.parse_request(body, model, stream), writer,
                 gemini.error_body, stream_error,
                 "text/event-stream" if sse else "application/json")


def post_front(api: str, query: str = "") -> Front | None:
    """The front that serves POST `api`, or None."""
    return FRONTS.get(api) or gemini_front(api, query)
