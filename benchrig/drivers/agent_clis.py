"""What the gemini, opencode, qwen, aider and mini-swe-agent drivers share: where the CLI is,
the model endpoint it is pointed at, the context-window check, and its own figures kept as
`reported_*` only."""

from __future__ import annotations

import importlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from benchrig.core.errors import DriverError, UsageError
from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import AgentRun
from benchrig.drivers.agent_process import AGENTS_BIN
from benchrig.drivers.base import DriverRequest

AGENTS_DIR = AGENTS_BIN.parent.parent  # .agents/: npm's node_modules/.bin, a venv per PyPI agent
LOCAL = "local"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# The system prompt BenchRig gives an agent whose own prompt and tools would not leave room
# for the task in a small model's window (where its flags or config allow replacing them).
SHORT_PROMPT = ("You are a coding agent working in the current folder. Use the tools to write "
                "and edit files there. When the work is done, reply with one short sentence.")
FIGURES_SOURCE = ("none of record yet: the model gateway measures them; the agent's own "
                  "figures are kept as reported_*")
CHARS_PER_TOKEN = 4  # the task's share of the first request, estimated


def locate_venv(name: str, venv: str, env_var: str, install_hint: str) -> str:
    """A PyPI agent's executable: $env_var, else `name` on PATH, else .agents/<venv>/bin/."""
    explicit = os.environ.get(env_var)
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return os.path.abspath(explicit)
        raise DriverError("infra", f"{env_var}={explicit} is not an executable file")
    found = shutil.which(name) or shutil.which(name, path=str(AGENTS_DIR / venv / "bin"))
    if found is None:
        raise DriverError("infra", f"{name} is not installed (not on PATH, {env_var} unset); "
                          f"install it: {install_hint}")
    return found


@dataclass(frozen=True)
class Endpoint:
    """Where the agent's model calls go: a base URL without `/v1`, the model id there."""

    base_url: str
    model: str
    local: bool = False  # the embedded model, served for this attempt
    window: int | None = None  # its context window in tokens, when BenchRig knows it
    server: dict[str, Any] = field(default_factory=dict)  # what the result records of it
    load_time_s: float | None = None
    session: Any = None  # the model gateway's session metering this attempt, if any


def preflight_provider(agent: str, provider: str | None, *, local_ok: bool) -> None:
    """The provider slot names the model's endpoint: `local` or a base URL."""
    if provider == LOCAL and not local_ok:
        raise UsageError(f"{agent} cannot use the embedded model yet: its API is not one "
                         "benchrig serve speaks (the model gateway will); give a base URL "
                         "that serves it as the provider")
    if provider != LOCAL and not (provider or "").startswith(("http://", "https://")):
        raise UsageError(f"{agent}: the provider is where its model is: `local` (the embedded "
                         f"model) or a base URL such as http://127.0.0.1:8080, not {provider!r}")


def gateway() -> ModuleType | None:
    """The model gateway (benchrig.gateway) once it is part of BenchRig, else None."""
    try:
        return importlib.import_module("benchrig.gateway")
    except ImportError:
        return None


@contextmanager
def endpoint(request: DriverRequest, agent: str, *, metered: bool = True
             ) -> Iterator[Endpoint]:
    """The attempt's model endpoint. With the model gateway (an OpenAI-chat agent, `metered`),
    a session of its own on it, fronting the embedded model (`local`) or the base URL, which
    meters every call. Without it, a base URL is used as given, and `local` serves the
    embedded model on loopback for this attempt (OpenAI chat only) and stops it afterwards."""
    provider = request.provider or ""
    meter = gateway() if metered else None
    if meter is not None:
        request.progress.phase("starting the model gateway")
        if provider == LOCAL:
            spec = meter.GatewaySpec.for_local_model(
                request.model, request.settings.context_size, request.settings.threads)
        else:
            base = provider.rstrip("/")
            spec = meter.GatewaySpec(backend="upstream", model=request.model,
                                     base_url=base if base.endswith("/v1") else f"{base}/v1")
        with meter.gateway_session(spec, label=f"{agent} {request.task.id}") as session:
            yield Endpoint(session.root, session.model, local=provider == LOCAL,
                           window=request.settings.context_size if provider == LOCAL
                           else None, server=session.settings,
                           load_time_s=session.load_time_s, session=session)
        return
    if provider != LOCAL:
        base = provider.rstrip("/")
        yield Endpoint(base.removesuffix("/v1"), request.model)
        return
    from benchrig.local.embedded_server import EmbeddedServer, ServerConfig

    request.progress.phase("starting the embedded model server")
    began = time.perf_counter()
    config = ServerConfig(model=request.model, context_size=request.settings.context_size,
                          threads=request.settings.threads)
    with EmbeddedServer(config) as server:
        settings = server.settings()
        yield Endpoint(server.base_url.removesuffix("/v1"), server.alias, local=True,
                       window=request.settings.context_size, server=settings,
                       load_time_s=time.perf_counter() - began)


def with_meter(where: Endpoint, agent: str, run: Callable[[], DriverOutput]) -> DriverOutput:
    """The agent's run with its figures of record from the gateway's session, when one
    metered it (the agent's own stay beside as `reported`), what was measured before a
    failure included; without a session, as the run returned it."""
    meter = gateway() if where.session is not None else None
    if meter is None:
        return run()
    try:
        output = run()
    except DriverError as failed:
        if failed.partial is not None:
            failed.partial = meter.with_gateway_figures(failed.partial, where.session.calls(),
                                                        agent)
        raise
    figured: DriverOutput = meter.with_gateway_figures(output, where.session.calls(), agent)
    return figured


def check_window(agent: str, overhead_tokens: int, request: DriverRequest,
                 trimmed: str) -> dict[str, Any]:
    """The prompt the agent will send, against the embedded model's window (`local`; a base
    URL's window is the server's to know): recorded when it fits, an honest error naming both
    when it cannot, before anything starts — never a silent truncation by the server."""
    window = request.settings.context_size if request.provider == LOCAL else None
    task_tokens = -(-sum(len(m["content"]) for m in request.messages) // CHARS_PER_TOKEN)
    answer = request.settings.max_tokens or 0
    record = {"prompt_overhead_tokens": overhead_tokens, "task_tokens_estimated": task_tokens,
              "context_window": window, "trimmed": trimmed}
    if window is not None and overhead_tokens + task_tokens + answer > window:
        raise DriverError("infra", (
            f"{agent}'s first request is about {overhead_tokens + task_tokens} tokens "
            f"({overhead_tokens} its own prompt and tools, measured with {trimmed}; "
            f"~{task_tokens} the task) plus max_tokens {answer}, more than the "
            f"{window}-token context window of {request.model}: not run, rather than have "
            "the server cut the prompt"), phase="agent")
    return record


def no_proxy(host: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """NO_PROXY with loopback added: the endpoint is never reached through a proxy."""
    return {name: ",".join(filter(None, [host.get(name), *LOOPBACK_HOSTS]))
            for name in ("no_proxy", "NO_PROXY")}


def settled(run: AgentRun, metered: bool) -> AgentRun:
    """The agent's figures as the parser read them when the gateway meters the attempt (it
    replaces them and keeps them as `reported`), else moved aside by keep_reported."""
    return run if metered else keep_reported(run)


def keep_reported(run: AgentRun) -> AgentRun:
    """The agent's own token and cost figures moved aside, to metrics.reported_* (where the
    gateway keeps them too): a tool the model runs can print them, so none is a figure of
    record (the gateway's are)."""
    run.reported = {"input_tokens": run.input_tokens, "output_tokens": run.output_tokens,
                    "cost_usd": run.cost_usd, "cost_source": run.cost_source}
    run.input_tokens = run.output_tokens = None
    run.input_source = run.output_source = None
    run.cost_usd, run.cost_source = None, FIGURES_SOURCE
    for name in ("input_tokens", "output_tokens", "cost_usd"):  # none left to be partial
        run.partial.pop(name, None)
    if run.rejected:  # nothing of the agent's is offered as a figure, so none is refused
        run.engine["agent_figures_unreadable"] = dict(run.rejected)
        run.rejected.clear()
    return run
