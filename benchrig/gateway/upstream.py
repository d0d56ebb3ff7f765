"""Any OpenAI-compatible server behind the gateway: each call forwarded streamed (with
`include_usage`, so the server's own counts come back), its chunks read as they arrive.
The gateway holds the key (from an environment variable it names); the agent never sees it."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import orjson

from benchrig.gateway.call import (
    BackendError,
    CallContext,
    ChatRequest,
    Done,
    Event,
    Pause,
    Reasoning,
    RequestError,
    Text,
    ToolCallPart,
)
from benchrig.gateway.chat import openai_body
from benchrig.gateway.upstream_http import Pool, WireError
from benchrig.streams import SSEDecoder
from benchrig.textsafe import stored

CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 3600.0  # CPU prefill of an agent's first request takes minutes


def loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


class UpstreamBackend:
    """Forwards to `base_url` (ending in /v1); `model` replaces the model a client asks for
    when given; the key comes from `api_key_env` and is sent only upstream."""

    name = "upstream"

    def __init__(self, base_url: str, *, model: str | None = None,
                 api_key_env: str | None = None) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        key = os.environ.get(api_key_env) if api_key_env else None
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        # a loopback server is never reached through HTTP(S)_PROXY (a hop in every figure)
        # a plain-http server on this machine is read with the wire client: everything one
        # socket read holds is forwarded in one write (httpx hands over a piece per chunk)
        self._wire = (Pool(self.base_url, READ_TIMEOUT_S, CONNECT_TIMEOUT_S)
                      if loopback(self.base_url) and self.base_url.startswith("http://")
                      else None)
        self._http = httpx.Client(timeout=httpx.Timeout(READ_TIMEOUT_S,
                                                        connect=CONNECT_TIMEOUT_S),
                                  trust_env=not loopback(self.base_url),
                                  limits=httpx.Limits(max_connections=256,
                                                      max_keepalive_connections=64))

    def model_id(self, requested: str) -> str:
        return self.model or requested

    def settings(self) -> dict[str, Any]:
        return {"server": "benchrig gateway", "backend": self.name, "upstream": self.base_url,
                "model": self.model, "api_key_env": self.api_key_env}

    def complete(self, request: ChatRequest, context: CallContext) -> Iterator[Event]:
        import httpx

        body = openai_body(request)
        body.update(stream=True, stream_options={"include_usage": True})
        if self.model:
            body["model"] = self.model
        url = f"{self.base_url}/chat/completions"
        if self._wire is not None:
            yield from self._complete_wire(url, body)
            return
        try:
            with self._http.stream("POST", url, content=orjson.dumps(body),
                                   headers={**self._headers,
                                            "Content-Type": "application/json"}) as response:
                if response.status_code >= 400:
                    detail = stored(response.read().decode("utf-8", "replace"), 2000)
                    if response.status_code in (400, 404, 413, 422):
                        raise RequestError(f"upstream said {response.status_code}: {detail}")
                    raise BackendError(f"upstream said {response.status_code}: {detail}")
                yield from self._read(response.iter_raw())
        except httpx.HTTPError as exc:
            raise BackendError(f"{url}: {type(exc).__name__}: {exc}") from None

    def _complete_wire(self, url: str, body: dict[str, Any]) -> Iterator[Event]:
        assert self._wire is not None
        try:
            reply = self._wire.post("/chat/completions", orjson.dumps(body), {
                **self._headers, "Content-Type": "application/json",
                "Accept": "text/event-stream"})
            if reply.status >= 400:
                detail = stored(b"".join(reply.body).decode("utf-8", "replace"), 2000)
                if reply.status in (400, 404, 413, 422):
                    raise RequestError(f"upstream said {reply.status}: {detail}")
                raise BackendError(f"upstream said {reply.status}: {detail}")
            yield from self._read(reply.body)
        except (OSError, WireError) as exc:
            raise BackendError(f"{url}: {type(exc).__name__}: {exc}") from None

    def _read(self, raw: Iterator[bytes]) -> Iterator[Event]:
        decoder = SSEDecoder()
        finish: str | None = None
        usage: dict[str, Any] = {}
        timings: dict[str, Any] = {}
        for chunk in raw:
            for sse in decoder.feed(chunk):
                if sse.data.strip() == b"[DONE]":
                    yield self._done(finish, usage, timings)
                    return
                try:
                    data = orjson.loads(sse.data)
                except orjson.JSONDecodeError:
                    raise BackendError("upstream sent an event that is not JSON") from None
                if not isinstance(data, dict):
                    continue
                if isinstance(data.get("error"), dict):
                    raise BackendError(f"upstream error: {stored(str(data['error']), 2000)}")
                if isinstance(data.get("usage"), dict):
                    usage = data["usage"]
                if isinstance(data.get("timings"), dict):
                    timings = data["timings"]
                for choice in data.get("choices") or ():
                    delta = choice.get("delta") or {}
                    finish = choice.get("finish_reason") or finish
                    thought = delta.get("reasoning_content") or delta.get("reasoning")
                    if isinstance(thought, str) and thought:
                        yield Reasoning(thought)
                    if isinstance(delta.get("content"), str) and delta["content"]:
                        yield Text(delta["content"])
                    for call in delta.get("tool_calls") or ():
                        function = call.get("function") or {}
                        yield ToolCallPart(int(call.get("index") or 0), call.get("id"),
                                           function.get("name"),
                                           function.get("arguments") or "")
            yield Pause()  # this read is used up: what it held leaves together
        if finish is None:
            raise BackendError("upstream stream ended before its finish_reason")
        yield self._done(finish, usage, timings)  # ended without [DONE]: accepted

    @staticmethod
    def _done(finish: str | None, usage: dict[str, Any], timings: dict[str, Any]) -> Done:
        prompt_ms = timings.get("prompt_ms")
        return Done(finish, input_tokens=_int(usage.get("prompt_tokens")),
                    output_tokens=_int(usage.get("completion_tokens")),
                    prefill_ms=float(prompt_ms) if isinstance(prompt_ms, int | float)
                    and prompt_ms > 0 else None,
                    counters={k: v for k, v in (("usage", usage), ("timings", timings)) if v})

    def close(self) -> None:
        self._http.close()
