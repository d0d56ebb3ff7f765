"""The model gateway: every agent attempt talks to its model through it, and it measures
every model call on the wire (docs/agents.md#the-gateway).

A driver opens a session on the run's shared gateway, points its agent at the session's
URL, and reads the session's calls at the end::

    from benchrig.gateway import GatewaySpec, gateway_session, with_gateway_figures

    spec = GatewaySpec(backend="embedded", model="smollm2", context_size=8192)
    with gateway_session(spec, label="pi lru-cache") as session:
        session.base_url    # http://127.0.0.1:<port>/s/<token>/v1  (OpenAI clients)
        session.root        # http://127.0.0.1:<port>/s/<token>     (clients that add /v1)
        session.model       # the model id to ask for
        output = ...        # run the agent against it
        calls = session.calls()
    output = with_gateway_figures(output, calls, agent="pi")
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from benchrig.gateway.attempt_figures import summarize, with_gateway_figures
from benchrig.gateway.backend import Backend
from benchrig.gateway.metering import CallRecord, Session
from benchrig.gateway.scripted import SCHEME
from benchrig.gateway.server import Gateway

__all__ = ["SCHEME", "Backend", "CallRecord", "Gateway", "GatewaySpec", "Session",
           "close_all", "gateway_session", "shared_gateway", "summarize",
           "with_gateway_figures"]


@dataclass(frozen=True)
class GatewaySpec:
    """Which back end a gateway fronts: `embedded` (a GGUF in this process; `model` is
    `smollm2` or a path), `upstream` (an OpenAI-compatible server at `base_url`, its key in
    the variable `api_key_env`), `ollama` (Ollama's native API at `base_url`), or `scripted`
    (a stand-in replaying the file `script`). An upstream or Ollama is asked for `model`
    whatever its name (Ollama has a smollm2); with none, each client's own is passed on.
    The embedded back end's model, if none is named, is its own default (smollm2)."""

    backend: Literal["embedded", "upstream", "ollama", "scripted"] = "embedded"
    model: str | None = None
    context_size: int = 8192
    threads: int | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    script: str | None = None

    @classmethod
    def for_local_model(cls, model: str, context_size: int, threads: int | None
                        ) -> GatewaySpec:
        """`script:<file>` is the scripted stand-in; anything else the embedded model."""
        if model.startswith(SCHEME):
            return cls(backend="scripted", model="scripted", script=model[len(SCHEME):])
        return cls(backend="embedded", model=model, context_size=context_size,
                   threads=threads)

    def build(self) -> Backend:
        if self.backend == "scripted":
            from benchrig.gateway.scripted import ScriptedBackend, load_script

            return ScriptedBackend(load_script(self.script or ""), self.model or "scripted")
        if self.backend == "upstream":
            from benchrig.gateway.upstream import UpstreamBackend

            return UpstreamBackend(self.base_url or "", model=self.model,
                                   api_key_env=self.api_key_env)
        if self.backend == "ollama":
            from benchrig.gateway.ollama_backend import OllamaBackend

            return OllamaBackend(self.base_url or "", model=self.model)
        from benchrig.gateway.embedded import EmbeddedBackend

        if self.model is None:
            return EmbeddedBackend(context_size=self.context_size, threads=self.threads)
        return EmbeddedBackend(self.model, context_size=self.context_size,
                               threads=self.threads)


_SHARED: dict[GatewaySpec, Gateway] = {}
_LOCK = threading.Lock()


def shared_gateway(spec: GatewaySpec) -> tuple[Gateway, float | None]:
    """This process's gateway for `spec`, started on first use and kept for the run (a model
    loads once); (gateway, seconds it took to start now, or None when it was running)."""
    with _LOCK:
        if spec in _SHARED:
            return _SHARED[spec], None
        began = time.perf_counter()
        gateway = Gateway(spec.build()).start()
        _SHARED[spec] = gateway
        return gateway, time.perf_counter() - began


def close_all() -> None:
    """Stop every shared gateway (at exit, or when a run ends)."""
    with _LOCK:
        gateways = list(_SHARED.values())
        _SHARED.clear()
    for gateway in gateways:
        gateway.stop()


atexit.register(close_all)


@contextmanager
def gateway_session(spec: GatewaySpec, label: str = "") -> Iterator[Session]:
    """A session of its own on the shared gateway for `spec`: its URL answers only while
    the block runs, and its calls are this attempt's alone (under --jobs too)."""
    gateway, started_s = shared_gateway(spec)
    session = gateway.open_session(label)
    # a back end that names no model of its own (an upstream serving its default) is asked
    # for the run's: an agent told "" cannot name its model to its client library (aider
    # then took a final refusal for a passing outage and retried it for a minute)
    session.model = gateway.backend.model_id(spec.model or "")
    session.settings = {**gateway.backend.settings(), "gateway": gateway.url}
    session.load_time_s = started_s
    try:
        yield session
    finally:
        gateway.close_session(session)
