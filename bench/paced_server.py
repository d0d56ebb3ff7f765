"""A paced loopback server: tokens at a known rate after a known first-byte delay.

    python bench/paced_server.py PORT '{"delay_s": 0.05, "rate": 400, "tokens": 2000, ...}'

Speaks OpenAI SSE (`/v1/chat/completions`, reasoning in `reasoning_content`, or inline
`<think>` when `inline_think`) and Ollama NDJSON (`/api/chat`, plus `/api/version`,
`/api/show`, `/api/ps`). A reply is `tokens` tokens, the first `thinking` of them thinking,
`per_event` tokens per event and `per_write` events per socket write. The first write
leaves `delay_s` after the request arrived and the last `tokens / rate` seconds after the
first, so by BenchRig's definition (output_tokens / (wall − ttft)) the rate sent is
exactly `rate`. `GET /truth` returns, per model name, when each request arrived and when
its first and last writes actually left (time.perf_counter, the same clock in every process
on Linux), so a client's error can be told from the server's own lateness.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from functools import cache
from typing import Any

SPIN_S = 0.002  # epoll sleeps in whole milliseconds: the first write polls its last 2 ms
SHOWN: set[str] = set()
TRUTH: dict[str, dict[str, float]] = {}


def token(index: int) -> str:
    return f" t{index}"


def plan(cfg: dict[str, Any]) -> list[list[tuple[str, str]]]:
    """Writes → events → (kind, text): kind is thinking or answer, never both in one event."""
    n, thinking, k = cfg["tokens"], cfg["thinking"], cfg["per_event"]
    events: list[tuple[str, str]] = []
    for start, stop, kind in ((0, thinking, "thinking"), (thinking, n, "answer")):
        for first in range(start, stop, k):
            events.append((kind, "".join(token(i) for i in range(first, min(first + k, stop)))))
    m = cfg["per_write"]
    return [events[i:i + m] for i in range(0, len(events), m)]


def sse_event(kind: str, text: str, inline: bool, first: bool, last_thinking: bool) -> bytes:
    if inline:
        if kind == "thinking":
            text = ("<think>" if first else "") + text + ("</think>" if last_thinking else "")
        delta = {"content": text}
    else:
        delta = {"reasoning_content": text} if kind == "thinking" else {"content": text}
    chunk = {"id": "c1", "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


@cache
def encoded(cfg_json: str, shape: str) -> list[bytes]:
    """The writes of a reply, encoded once: 32 streams must not cost 32 encodings."""
    return encode(json.loads(cfg_json), shape, "paced")


def ndjson_event(model: str, kind: str, text: str) -> bytes:
    message = {"role": "assistant", "content": "" if kind == "thinking" else text}
    if kind == "thinking":
        message["thinking"] = text
    line = {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": message,
            "done": False}
    return json.dumps(line).encode() + b"\n"


def encode(cfg: dict[str, Any], shape: str, model: str) -> list[bytes]:
    writes = plan(cfg)
    flat = [event for write in writes for event in write]
    last_thinking = max((i for i, (kind, _) in enumerate(flat) if kind == "thinking"),
                        default=-1)
    out, index = [], 0
    for write in writes:
        data = b""
        for kind, text in write:
            if shape == "ollama":
                data += ndjson_event(model, kind, text)
            else:
                data += sse_event(kind, text, cfg.get("inline_think", False), index == 0,
                                  index == last_thinking)
            index += 1
        out.append(data)
    return out


def tail(cfg: dict[str, Any], shape: str, model: str, span_s: float) -> bytes:
    """The end of the stream, sent with the last write: finish, counters, end marker."""
    if shape == "ollama":
        done = {"model": model, "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": ""}, "done": True,
                "done_reason": "stop", "prompt_eval_count": 20,
                "prompt_eval_duration": int(cfg["delay_s"] * 1e9),
                "eval_count": cfg["tokens"], "eval_duration": int(span_s * 1e9)}
        return json.dumps(done).encode() + b"\n"
    finish = {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    usage = {"id": "c1", "choices": [], "usage": {"prompt_tokens": 20,
                                                  "completion_tokens": cfg["tokens"]}}
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in (finish, usage)
                    ) + b"data: [DONE]\n\n"


async def stream(writer: asyncio.StreamWriter, cfg: dict[str, Any], shape: str, model: str,
                 arrived: float) -> None:
    kind = "application/x-ndjson" if shape == "ollama" else "text/event-stream"
    writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nConnection: close\r\n\r\n"
                 .encode())
    writes = encoded(json.dumps(cfg, sort_keys=True), shape)
    span = cfg["tokens"] / cfg["rate"]
    step = span / (len(writes) - 1) if len(writes) > 1 else 0.0
    loop = asyncio.get_running_loop()
    start = loop.time() + (arrived - time.perf_counter()) + cfg["delay_s"]
    truth = TRUTH[model] = {"arrived": arrived}
    for index, data in enumerate(writes):
        if index == len(writes) - 1:
            data += tail(cfg, shape, model, span)
        due = start + index * step
        if due - loop.time() > SPIN_S:
            await asyncio.sleep(due - loop.time() - SPIN_S)
        while index == 0 and loop.time() < due:  # the first byte on time: poll, don't sleep
            await asyncio.sleep(0)
        writer.write(data)
        await writer.drain()
        truth["last_write"] = time.perf_counter()
        truth.setdefault("first_write", truth["last_write"])


def reply_json(writer: asyncio.StreamWriter, data: Any) -> None:
    body = json.dumps(data).encode()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 cfg: dict[str, Any]) -> None:
    with contextlib.suppress(ConnectionError):  # the client hung up: nothing to send
        await route(reader, writer, cfg)


async def route(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                cfg: dict[str, Any]) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    arrived = time.perf_counter()
    lines = head.decode().split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    length = next((int(h.split(":", 1)[1]) for h in lines[1:]
                   if h.lower().startswith("content-length:")), 0)
    body = json.loads(await reader.readexactly(length)) if length else {}
    model = body.get("model", "")
    if path == "/v1/chat/completions":
        await stream(writer, cfg, "openai", model, arrived)
    elif path == "/api/chat" and body.get("messages"):
        await stream(writer, cfg, "ollama", model, arrived)
    elif path == "/api/chat":  # load-only warm-up
        reply_json(writer, {"model": model, "done": True, "done_reason": "load"})
    elif path == "/api/show":
        SHOWN.add(model)
        reply_json(writer, {"capabilities": ["completion", "thinking"]})
    elif path == "/api/ps":
        reply_json(writer, {"models": [{"name": m, "model": m, "size": 1, "size_vram": 0,
                                        "context_length": cfg["num_ctx"]} for m in SHOWN]})
    elif path == "/api/version":
        reply_json(writer, {"version": "paced"})
    elif path == "/v1/benchrig/server" and "server_info" in cfg:  # as benchrig serve's
        reply_json(writer, cfg["server_info"])
    elif path == "/truth":
        reply_json(writer, TRUTH)
    else:
        reply_json(writer, {"error": f"no route {method} {path}"})
    await writer.drain()
    writer.close()


async def main(port: int, cfg: dict[str, Any]) -> None:
    server = await asyncio.start_server(lambda r, w: handle(r, w, cfg), "127.0.0.1", port,
                                        backlog=256)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), json.loads(sys.argv[2])))
