"""A chat completion with tools (OpenAI's non-streamed shape, which llama-cpp-python's handler
also returns) → a ToolReply: its text and its calls exactly as received."""

from __future__ import annotations

from typing import Any

from benchrig.core.errors import DriverError
from benchrig.core.measurements import TokenSource
from benchrig.core.toolcase import ToolReply
from benchrig.drivers.httpstream import as_text, count
from benchrig.thinking import split_thinking


def answer_of(content: object) -> str:
    """A reply's text as the checks read it: what follows `</think>` (a trace left in the
    content never counts as the answer)."""
    return split_thinking(content)[1] if isinstance(content, str) else ""


def refuses_tools(message: str) -> bool:
    """Whether an HTTP 4xx is the server refusing `tools` itself (not some other problem)."""
    lowered = message.lower()
    return lowered.startswith("http 4") and any(
        word in lowered for word in ("tool", "function call", "function_call"))


def calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's `tool_calls` (OpenAI's and Ollama's shape) as received: id, name and the
    arguments, whatever they are (a string, an object); one that is not a call is kept as
    received, and the checker calls it malformed."""
    calls = []
    for raw in message.get("tool_calls") or ():
        function = raw.get("function") if isinstance(raw, dict) else None
        if isinstance(function, dict):
            calls.append({"id": raw.get("id"), "name": function.get("name"),
                          "arguments": function.get("arguments")})
        else:
            calls.append({"id": None, "name": None, "arguments": raw})
    return calls


def tool_reply(reply: dict[str, Any], url: str, wall: float,
               runtime: dict[str, Any], effective: dict[str, Any],
               tokens_source: TokenSource = "server") -> ToolReply:
    """A non-streamed chat completion → the reply's text and its calls as received."""
    choices = reply.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise DriverError("infra", f"{url} answered without choices[0].message: "
                          f"{str(reply)[:200]!r}")
    calls = calls_of(message)
    found = reply.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    content = message.get("content")
    return ToolReply(text=answer_of(content), calls=tuple(calls),
                     finish_reason=as_text(choice.get("finish_reason")) if choice else None,
                     wall_s=wall, input_tokens=count(usage.get("prompt_tokens")),
                     output_tokens=count(usage.get("completion_tokens")),
                     tokens_source=tokens_source,
                     raw={"message": message, "usage": usage or None,
                          "timings": reply.get("timings"),
                          **({"load_time_s": reply["load_time_s"]}
                             if "load_time_s" in reply else {})},
                     runtime=runtime, effective=effective)
