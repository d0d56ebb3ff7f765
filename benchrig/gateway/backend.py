"""What every back end offers the gateway."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from benchrig.gateway.call import CallContext, ChatRequest, Event


class Backend(Protocol):
    """A model behind the gateway: `complete` yields a call's events, ending with Done, or
    raises RequestError (the request's fault: 400) or BackendError (the back end's)."""

    name: str  # the price table's back-end key: embedded, upstream, scripted

    def model_id(self, requested: str) -> str:
        """The model a call is answered by (recorded, and the price table's key)."""
        ...

    def settings(self) -> dict[str, Any]:
        """What a result records about this back end."""
        ...

    def complete(self, request: ChatRequest, context: CallContext) -> Iterator[Event]:
        ...

    def close(self) -> None:
        ...
