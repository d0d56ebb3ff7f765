"""pi (@mariozechner/pi-coding-agent) unattended: `pi --mode json -p`, its JSONL parsed for
TTFT, usage, cost and stopReason; provider `local` runs it against the embedded model, and a
hosted provider whose API is OpenAI's through a gateway session that holds the key."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.core.errors import DriverError, UsageError
from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import (
    AgentRun,
    StreamParser,
    amount,
    drive,
    message_text,
    prompt_text,
)
from benchrig.drivers.agent_env import Needs, config_dir
from benchrig.drivers.agent_process import locate
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.confine import attempts_folder
from benchrig.gateway import SCHEME, GatewaySpec, Session, gateway_session, with_gateway_figures
from benchrig.jsonsafe import whole

PACKAGE = "@mariozechner/pi-coding-agent"
PINNED_VERSION = "0.73.1"  # the version `make agents` installs and the tests run
INSTALL_HINT = f"npm install -g {PACKAGE}@{PINNED_VERSION} (or `make agents` for .agents/)"
LOCAL = "local"
# A clean run: no session file, no startup network calls, and nothing from the user's setup
# or the folders above the workspace (AGENTS.md, extensions, skills, prompt templates).
FLAGS = ["--mode", "json", "-p", "--no-session", "--offline", "--no-context-files",
         "--no-extensions", "--no-skills", "--no-prompt-templates"]
DELTAS = {"text_delta": "answer", "toolcall_start": "answer", "toolcall_delta": "answer",
          "thinking_delta": "thinking"}
USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# The variables each pi provider reads (pi-ai's env-api-keys); a provider not listed gets
# none of them (pass its own with --pass-env), no provider (pi's default) gets them all.
PROVIDER_VARIABLES = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
    "ollama": ("OLLAMA_BASE_URL",),
    "llamacpp": ("LLAMA_BASE_URL",),
}
# The hosted providers' API hosts: preflight checks one answers before any attempt.
PROVIDER_HOSTS = {
    "anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com",
    "google": "https://generativelanguage.googleapis.com", "groq": "https://api.groq.com",
    "cerebras": "https://api.cerebras.ai", "xai": "https://api.x.ai",
    "openrouter": "https://openrouter.ai", "zai": "https://api.z.ai",
    "mistral": "https://api.mistral.ai",
}
# pi's hosted providers whose API the gateway speaks and forwards as OpenAI Chat Completions,
# with the base URL pi itself uses for them: z.ai's API is Chat Completions; pi reaches
# OpenAI's by Responses, a front of the gateway. pi is pointed at a gateway session (its
# built-in models kept: names, windows, its own prices) and given no key; the gateway's
# upstream back end holds it, from the provider's variable, and meters every call. Anthropic's
# Messages API is not OpenAI-compatible (the upstream back end speaks Chat Completions only):
# pi on `anthropic` still talks to it directly, its figures its own.
GATEWAY_PROVIDERS = {"zai": "https://api.z.ai/api/coding/paas/v4",
                     "openai": "https://api.openai.com/v1"}
GATEWAY_KEY = "benchrig-gateway"  # what pi sends the session: a placeholder, not a key
# pi's own files: its logins, custom providers and settings (~/.pi/agent, or
# PI_CODING_AGENT_DIR)
AGENT_FILES = ("auth.json", "models.json", "settings.json")


class PiParser(StreamParser):
    """pi's `--mode json` events (AgentSessionEvent, one per line)."""

    closing_event = "agent_end"

    def __init__(self, local: bool) -> None:
        super().__init__()
        self.local = local
        self.usage = dict.fromkeys(USAGE_KEYS, 0)
        self.cost = 0.0  # the sum of the valid costs counted
        self.good_costs = 0
        self.bad_costs = 0  # costs that were not a finite number of at least 0
        self.calls = 0
        self.ignored = 0  # assistant messages after a tool ran: their figures not counted
        self.trusted_deltas = 0
        self.stop_reason: str | None = None
        self.error_message: str | None = None
        self.retry_error: str | None = None
        self.retries = 0
        self.turns = 0
        self.tools: dict[str, dict[str, Any]] = {}

    def event(self, t: float, event: Any) -> None:
        kind = event.get("type")
        run = self.run
        if kind == "message_update":
            update = event.get("assistantMessageEvent") or {}
            role = DELTAS.get(str(update.get("type")))
            if role == "thinking":
                run.thought(t, update.get("delta") or "")
            elif role == "answer":
                run.saw_answer(t)
            if role and update.get("type") != "toolcall_start":
                run.deltas += 1
                self.trusted_deltas += run.figures_trusted
        elif kind == "message_end":
            self._message_end(t, event.get("message") or {})
        elif kind == "turn_end":
            if (event.get("message") or {}).get("stopReason") not in ("error", "aborted"):
                self.turns += 1
        elif kind == "tool_execution_start":
            run.tool_began(t)
            call = {"id": event.get("toolCallId"), "name": event.get("toolName"),
                    "arguments": event.get("args")}
            self.tools[str(call["id"])] = call
            run.tool_calls.append(call)
        elif kind == "tool_execution_end":
            if str(event.get("toolCallId")) in self.tools:
                self.tools[str(event.get("toolCallId"))]["is_error"] = bool(event.get("isError"))
        elif kind == "agent_end":
            run.completed = True
        elif kind == "auto_retry_start":
            self.retries += 1
            run.completed = False  # another agent run follows
        elif kind == "auto_retry_end" and not event.get("success"):
            self.retry_error = str(event.get("finalError") or "retries exhausted")

    def _message_end(self, t: float, message: dict[str, Any]) -> None:
        if message.get("role") != "assistant":
            return
        self.calls += 1
        if self.run.figures_trusted:
            self._count(t, message.get("usage") or {})
        else:
            self.ignored += 1
        self.stop_reason = message.get("stopReason")
        self.error_message = message.get("errorMessage")
        text = message_text(message)
        if text.strip():
            self.run.answer = text

    def _count(self, t: float, usage: dict[str, Any]) -> None:
        """One message's usage and cost, reported before any tool ran."""
        self.run.decode_end_s = t
        for key in USAGE_KEYS:
            self.usage[key] += whole(usage.get(key)) or 0
        total = (usage.get("cost") or {}).get("total")
        if total is not None:
            cost = amount(total)
            self.bad_costs += cost is None
            self.good_costs += cost is not None
            self.cost += cost or 0.0

    def record(self, event: Any) -> Any:
        """pi repeats the whole partial message in every message_update (quadratic output);
        the sidecar keeps the delta, message_end keeps the whole message."""
        if isinstance(event, dict) and event.get("type") == "message_update":
            update = {k: v for k, v in (event.get("assistantMessageEvent") or {}).items()
                      if k != "partial"}
            return {k: v for k, v in event.items() if k != "message"} | {
                "assistantMessageEvent": update}
        return event

    def finish(self) -> AgentRun:
        run = self.run
        run.turns = self.turns
        run.finish_reason = self.stop_reason
        if self.stop_reason in ("error", "aborted"):
            run.failure = f"stopReason {self.stop_reason}: {self.error_message or 'no message'}"
        elif self.retry_error:
            run.failure = f"auto-retry failed: {self.retry_error}"
        reported = self.usage["totalTokens"] > 0 or self.usage["output"] > 0
        if reported:
            u = self.usage
            run.input_tokens = u["input"] + u["cacheRead"] + u["cacheWrite"]
            run.output_tokens = u["output"]
            run.input_source = run.output_source = "server"
        elif self.trusted_deltas:
            run.output_tokens, run.output_source = self.trusted_deltas, "estimated"
            run.engine["usage_note"] = ("the server sent no usage while streaming: output "
                                        "tokens are the streamed deltas (an estimate: one "
                                        "delta may carry several tokens); input tokens are "
                                        "unknown")
        if self.local:
            run.cost_usd, run.cost_source = 0.0, "local model (benchrig serve): no charge"
        elif reported and self.bad_costs and not self.good_costs:  # no cost is never 0
            run.cost_source = "pi reported a cost that is not a finite number"
            run.rejected["cost_usd"] = (f"none of the {self.bad_costs} message cost(s) pi "
                                        "reported is a finite number of at least 0")
        elif reported:
            run.cost_usd, run.cost_source = self.cost, "pi: its price table for the model"
            if self.bad_costs:  # the others still count: one bad figure erases nothing
                run.partial["cost_usd"] = (f"the sum of the {self.good_costs} valid message "
                                           f"costs; {self.bad_costs} were not a finite number "
                                           "of at least 0")
        if self.ignored or (run.deltas > self.trusted_deltas and not reported):
            # local: input tokens are never known and the cost is 0 whatever pi says
            run.untrusted(*(("output_tokens",) if self.local else (
                "input_tokens", "output_tokens", "cost_usd")))
        run.engine.update({"llm_calls": self.calls, "retries": self.retries,
                           "usage": dict(self.usage), "stop_reason": self.stop_reason,
                           "messages_not_counted": self.ignored})
        return run


@dataclass(frozen=True)
class LocalAgent:
    home: Path
    session: Session


def _config(base_url: str, model_id: str, request: DriverRequest) -> dict[str, Any]:
    settings = request.settings
    return {"providers": {LOCAL: {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "none",
        # pi sends its system prompt as `system` and no reasoning_effort: the embedded
        # model has neither a developer role nor a reasoning switch
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False,
                   "maxTokensField": "max_tokens"},
        "models": [{"id": model_id, "name": model_id, "reasoning": False,
                    "contextWindow": settings.context_size, "maxTokens": settings.max_tokens,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }}}


def _spec(request: DriverRequest) -> GatewaySpec:
    """The gateway's back end: the provider's API with its key (a hosted provider), else the
    embedded model or `script:<file>`'s stand-in (`local`)."""
    provider = request.provider or ""
    if provider in GATEWAY_PROVIDERS:
        return GatewaySpec(backend="upstream", model=request.model,
                           base_url=GATEWAY_PROVIDERS[provider],
                           api_key_env=PROVIDER_VARIABLES[provider][0])
    # threads None: the embedded model's default, all cores but one (default_threads)
    return GatewaySpec.for_local_model(request.model, request.settings.context_size,
                                       request.settings.threads)


@contextmanager
def local_agent(request: DriverRequest) -> Iterator[LocalAgent]:
    """A session of its own on the run's gateway (`_spec`), and a private pi home that points
    at the session's URL; the user's own ~/.pi is never read or changed. The home is gone
    afterwards, the session closed."""
    home = Path(tempfile.mkdtemp(prefix="benchrig-pi-home-", dir=attempts_folder()))
    try:
        request.progress.phase("starting the model gateway")
        with gateway_session(_spec(request), label=f"pi {request.task.id}") as session:
            agent_dir = home / ".pi" / "agent"
            agent_dir.mkdir(parents=True)
            if request.provider in GATEWAY_PROVIDERS:
                # the built-in provider routed through the session (pi's docs: "Overriding
                # Built-in Providers"): its models, compat and prices stay pi's own
                models = {"providers": {request.provider: {"baseUrl": session.base_url,
                                                           "apiKey": GATEWAY_KEY}}}
                (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
            else:
                models = _config(session.base_url, session.model, request)
                (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
                # pi's default compaction reserve (16384) exceeds a small local context: it
                # would summarize after every turn
                (agent_dir / "settings.json").write_text(json.dumps(
                    {"compaction": {"enabled": False}}, indent=2))
            yield LocalAgent(home, session)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def needs(host: Mapping[str, str], provider: str | None) -> Needs:
    """The provider's variables and copies of pi's files, in the private home's ~/.pi/agent."""
    if provider is None:
        names = tuple(sorted({n for names in PROVIDER_VARIABLES.values() for n in names}))
    else:
        names = PROVIDER_VARIABLES.get(provider, ())
    folder = config_dir(host, "PI_CODING_AGENT_DIR", ".pi/agent")
    return Needs(variables=names, files=tuple(
        (folder / name, f".pi/agent/{name}") for name in AGENT_FILES))


class PiDriver:
    name = "pi"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        from benchrig.drivers.preflight import need_binary, need_host, need_key

        need_binary("pi", "BENCHRIG_PI_BIN", INSTALL_HINT)
        if provider in PROVIDER_HOSTS:  # a hosted provider: its key, and its host reachable
            login = config_dir(os.environ, "PI_CODING_AGENT_DIR", ".pi/agent") / "auth.json"
            # through the gateway, the key is the gateway's: from the variable (pi's login
            # stays pi's, and pi is given no key)
            need_key("pi", provider, PROVIDER_VARIABLES.get(provider, ()),
                     None if provider in GATEWAY_PROVIDERS else str(login))
            need_host(PROVIDER_HOSTS[provider], f"pi: provider {provider}")
        if provider == LOCAL and model.startswith(SCHEME):
            if not Path(model[len(SCHEME):]).is_file():
                raise UsageError(f"scripted model: {model[len(SCHEME):]} is not a file")
        elif provider == LOCAL:
            from benchrig.local.model import INSTALL_HINT as LOCAL_HINT
            from benchrig.local.model import resolve_model

            if importlib.util.find_spec("llama_cpp") is None:
                raise UsageError(f"pi with provider local needs llama-cpp-python: {LOCAL_HINT}")
            resolve_model(model)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("pi", "BENCHRIG_PI_BIN", INSTALL_HINT)
        if request.provider != LOCAL and request.provider not in GATEWAY_PROVIDERS:
            return self._drive(request, binary, None)
        with local_agent(request) as local:
            try:
                output = self._drive(request, binary, local)
            except DriverError as failed:
                # what was measured before the failure is the gateway's too
                if failed.partial is None:
                    raise
                failed.partial = with_gateway_figures(failed.partial,
                                                      local.session.calls(), "pi")
                raise
            # the figures of record are the gateway's: pi's own stay beside as reported_*
            return with_gateway_figures(output, local.session.calls(), "pi")

    def _drive(self, request: DriverRequest, binary: str, local: LocalAgent | None
               ) -> DriverOutput:
        if local is None:
            pi_needs = needs(os.environ, request.provider)
        else:  # the private home local_agent made: nothing of the user's is copied
            fixed = {"PI_CODING_AGENT_DIR": str(local.home / ".pi" / "agent"),
                     "PI_OFFLINE": "1"}
            # pi's fetch honours http(s)_proxy; the embedded server is on loopback
            for name in ("no_proxy", "NO_PROXY"):
                fixed[name] = ",".join(filter(None, [os.environ.get(name), *LOOPBACK_HOSTS]))
            pi_needs = Needs(fixed=fixed, home=local.home)
        flags = list(FLAGS)
        if request.provider:
            flags += ["--provider", request.provider]
        flags += ["--model", local.session.model if local else request.model]
        runtime: dict[str, Any] = {"name": "pi", "package": PACKAGE, "path": binary}
        effective: dict[str, Any] = {"agent_flags": flags}
        if local is not None:
            server = local.session.settings
            runtime["server"] = {"name": server["server"], "backend": server["backend"],
                                 "version": server.get("version")}
            effective.update({"server": server, "agent_home": "private temporary folder"})
            if request.provider == LOCAL:  # pi's config says these (a hosted model: pi's own)
                effective.update({"max_tokens": request.settings.max_tokens,
                                  "context_size": request.settings.context_size,
                                  "threads": server.get("threads"), "compaction": False})
        return drive(request, agent="pi", argv=[binary, *flags, prompt_text(request)],
                     needs=pi_needs,
                     parser=PiParser(request.provider == LOCAL), runtime=runtime,
                     effective=effective,
                     load_time_s=local.session.load_time_s if local else None)

