"""Every model call measured on the wire: a Meter watches the back end's events as the
gateway forwards them and leaves one CallRecord in the call's session."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchrig.gateway.call import CallContext, Done, Event, Reasoning, Text, ToolCallPart
from benchrig.gateway.prices import PriceTable
from benchrig.textsafe import NAME_CAP, stored

UNSTREAMED_BASIS = "whole reply: the back end answered this call unstreamed"
STREAMED_BASIS = "first token the back end streamed"
# The source of a refused call's tokens: the gateway refused it before any model saw it, so
# its 0 and 0 are known exactly, from that refusal (never a count, never unknown).
REFUSED = "refused"


@dataclass(frozen=True)
class CallRecord:
    """One model call as the gateway saw it; times from the request's dispatch to the back
    end, token counts with their source (`server`: the back end's counters; `estimated`:
    streamed pieces; `refused`: none, the gateway refused the call), cost from the price
    table (None when the price is unknown)."""

    session: str
    index: int
    front: str
    backend: str
    model: str
    stream: bool
    started_at: str
    wall_ms: float
    ttft_ms: float | None
    answer_ttft_ms: float | None  # to the first answer text or tool call (not reasoning)
    ttft_basis: str | None
    decode_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    tokens_source: str | None
    prefill_tokens_per_s: float | None
    decode_tokens_per_s: float | None
    tool_calls: tuple[str, ...]
    thinking_chars: int
    finish_reason: str | None
    request_bytes: int
    response_bytes: int
    cost_usd: float | None
    cost_source: str
    status: str  # "ok", or what went wrong
    counters: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tool_calls"] = list(self.tool_calls)
        return data


class Meter:
    """Stamps one call: dispatch, first token, end; counts what it forwarded."""

    def __init__(self, context: CallContext, *, front: str, backend: str, model: str,
                 stream: bool, request_bytes: int, prices: PriceTable) -> None:
        self.context, self.front, self.backend, self.model = context, front, backend, model
        self.stream, self.request_bytes, self.prices = stream, request_bytes, prices
        self.started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.t0 = time.perf_counter()
        self.first: float | None = None
        self.first_answer: float | None = None
        self.last: float | None = None
        self.thinking_chars = 0
        self.pieces = 0
        self.tools: dict[int, str] = {}
        self.done: Done | None = None
        self.response_bytes = 0

    def watch(self, events: Iterator[Event]) -> Generator[Event, None, None]:
        for event in events:
            now = time.perf_counter()
            if isinstance(event, Done):
                self.done = event
                self.last = now
            else:
                if self.first is None and _carries(event):
                    self.first = now
                if _carries(event):
                    self.pieces += 1
                    self.last = now
                    if isinstance(event, Reasoning):
                        self.thinking_chars += len(event.text)
                    elif self.first_answer is None:
                        self.first_answer = now
                if isinstance(event, ToolCallPart):
                    self.tools[event.index] = self.tools.get(event.index, "") + (event.name or "")
            yield event

    def sent(self, size: int) -> None:
        self.response_bytes += size

    def finish(self, status: str = "ok") -> CallRecord:
        end = time.perf_counter()
        done = self.done
        output, source = (done.output_tokens, "server") if done and done.output_tokens \
            is not None else (None, None)
        if output is None and self.pieces and done is not None:
            output, source = self.pieces, "estimated"  # one streamed piece ≈ one token
        inputs = done.input_tokens if done else None
        unseen = done is None and not self.pieces and status.startswith("refused")
        if unseen:  # refused before the model saw it (a 400): nothing processed, not unknown
            inputs, output = 0, 0
        ttft = (self.first - self.t0) * 1000 if self.first is not None else None
        answer = ((self.first_answer - self.t0) * 1000 if self.first_answer is not None
                  else None)
        decode = ((self.last or end) - self.first) * 1000 if self.first is not None else None
        streamed = done.streamed if done else True
        price = self.prices.find(self.backend, self.model)
        cost = price.cost(inputs, output) if price else None
        cost_source = (price.source if price and cost is not None else
                       "token counts unknown" if price else
                       f"no price for {self.backend}/{self.model} in the price table")
        prefill = (inputs / (done.prefill_ms / 1000) if done and inputs and done.prefill_ms
                   else None)
        # streamed: first token to last, on the wire; sent whole: the back end's decode time
        span = decode if streamed else (done.decode_ms if done else None)
        rate = output / (span / 1000) if output and span and span > 0 else None
        return CallRecord(
            session=self.context.session, index=self.context.index, front=self.front,
            backend=self.backend, model=stored(self.model, NAME_CAP), stream=self.stream,
            started_at=self.started_at, wall_ms=(end - self.t0) * 1000, ttft_ms=ttft,
            answer_ttft_ms=answer, thinking_chars=self.thinking_chars,
            ttft_basis=None if ttft is None else STREAMED_BASIS if streamed else
            UNSTREAMED_BASIS, decode_ms=decode, input_tokens=inputs, output_tokens=output,
            # exact zeros say they come from the refusal, not a count (`reached_model`)
            tokens_source=REFUSED if unseen else source if output is not None else (
                "server" if inputs is not None else None),
            prefill_tokens_per_s=prefill, decode_tokens_per_s=rate,
            tool_calls=tuple(stored(self.tools[i], NAME_CAP) for i in sorted(self.tools)),
            finish_reason=stored(done.finish_reason, NAME_CAP) if done and done.finish_reason
            else None, request_bytes=self.request_bytes, response_bytes=self.response_bytes,
            cost_usd=cost, cost_source=cost_source, status=stored(status, 2000),
            counters=dict(done.counters) if done else {})


def reached_model(call: CallRecord) -> bool:
    """Whether the call reached a model: one refused before any did (`Meter.finish`) has
    exact zero tokens from `REFUSED`, and adds nothing to a session's sums or their source."""
    return call.tokens_source != REFUSED


def _carries(event: Event) -> bool:
    """A token of any kind: text, reasoning, or a tool call's name or arguments."""
    if isinstance(event, Text | Reasoning):
        return bool(event.text)
    return isinstance(event, ToolCallPart) and bool(event.name or event.arguments)


class Session:
    """The calls of one agent attempt, reached at its own base URL path `/s/<token>`."""

    def __init__(self, token: str, label: str, root: str) -> None:
        self.token, self.label = token, label
        self.root = root  # http://127.0.0.1:<port>/s/<token>: Anthropic-style clients
        self.base_url = root + "/v1"  # OpenAI-style clients
        self._calls: list[CallRecord] = []
        self._next = 0
        self.model = ""  # what the agent asks for (set by gateway_session)
        self.settings: dict[str, Any] = {}  # the back end's, for the result
        self.load_time_s: float | None = None  # the gateway's start, if this session paid it
        self._lock = threading.Lock()

    def next_context(self) -> CallContext:
        with self._lock:
            index, self._next = self._next, self._next + 1
        return CallContext(self.token, index)

    def record(self, call: CallRecord) -> None:
        with self._lock:
            self._calls.append(call)

    def calls(self) -> tuple[CallRecord, ...]:
        """The calls finished so far, in the order they ended."""
        with self._lock:
            return tuple(self._calls)
