"""opencode (npm `opencode-ai`) unattended: `opencode run --format json`, its step and part
events read for turns and tool calls; pointed at an OpenAI-compatible endpoint through a
config of BenchRig's own, trimmed to fit a small model's window."""

from __future__ import annotations

import json
import os
from typing import Any

from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import AgentRun, StreamParser, drive, prompt_text
from benchrig.drivers.agent_clis import (
    SHORT_PROMPT,
    Endpoint,
    check_window,
    endpoint,
    no_proxy,
    preflight_provider,
    settled,
    with_meter,
)
from benchrig.drivers.agent_env import Needs
from benchrig.drivers.agent_process import locate
from benchrig.drivers.base import DriverRequest
from benchrig.jsonsafe import whole

PACKAGE = "opencode-ai"
PINNED_VERSION = "1.18.33"
INSTALL_HINT = f"npm install -g {PACKAGE}@{PINNED_VERSION} (or `make agents-all` for .agents/)"
PROVIDER_ID = "benchrig"
# --pure: no external plugins; --auto: no permission prompts; --title: no title request
FLAGS = ["run", "--format", "json", "--pure", "--auto", "--title", "benchrig"]
# Start-up network calls switched off: the models.dev catalogue, the update check, LSP
# downloads, default plugins (installed from npm), sharing; and no config or CLAUDE.md from
# the folders above the workspace (/tmp is shared between attempts).
FIXED_ENV = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
             "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
             "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
             "OPENCODE_DISABLE_CLAUDE_CODE": "1",
             # no summarizing mid-run: a small window would trigger it at every turn
             "OPENCODE_DISABLE_AUTOCOMPACT": "1"}
# Tools left out so that its first request fits an 8,192-token window: bash, write and edit
# remain.
DISABLED_TOOLS = ("glob", "grep", "skill", "task", "todowrite", "webfetch", "read")
# Its first request, with this config (SmolLM2's tokenizer, against tests/helpers/standin.py);
# untrimmed it was 7,500 (docs/agents.md).
PROMPT_OVERHEAD_TOKENS = 2_294
TTFT_BASIS = "first finished part: opencode run --format json streams no token deltas"


class OpencodeParser(StreamParser):
    """`{type, timestamp, sessionID, part}` lines: step_start, text, reasoning, tool_use,
    step_finish (reason, tokens, cost), error; newer builds end with done."""

    closing_event = "a final step_finish"

    def __init__(self, metered: bool = False) -> None:
        super().__init__()
        self.metered = metered  # the gateway measures: the figures are replaced
        self.steps = 0
        self.tokens = {"input": 0, "output": 0, "reasoning": 0, "cache_read": 0,
                       "cache_write": 0}
        self.cost: float | None = 0.0
        self.reason: str | None = None

    def event(self, t: float, event: Any) -> None:
        kind = event.get("type")
        part = event.get("part") or {}
        run = self.run
        if kind == "text":
            run.saw_answer(t)
            if str(part.get("text") or "").strip():
                run.answer = str(part["text"])
            run.deltas += 1
        elif kind == "reasoning":
            run.thought(t, str(part.get("text") or ""))
        elif kind == "tool_use":  # sent once the tool has run: later events may be its own
            run.saw_answer(t)
            run.tool_began(t)
            state = part.get("state") or {}
            run.tool_calls.append({"id": part.get("callID"), "name": part.get("tool"),
                                   "arguments": state.get("input"),
                                   "is_error": state.get("status") == "error"})
            run.deltas += 1
        elif kind == "step_finish":
            self._step(part)
        elif kind == "done":
            run.completed = True
        elif kind == "error":
            error = event.get("error") or part.get("error") or event
            run.failure = str(error.get("message") if isinstance(error, dict)
                              and error.get("message") else error)[:2000]

    def _step(self, part: dict[str, Any]) -> None:
        self.steps += 1
        self.reason = part.get("reason")
        # "tool-calls" means another step follows; any other reason ends the run
        self.run.completed = self.reason != "tool-calls"
        tokens = part.get("tokens") or {}
        cache = tokens.get("cache") or {}
        for key, value in (("input", tokens.get("input")), ("output", tokens.get("output")),
                           ("reasoning", tokens.get("reasoning")),
                           ("cache_read", cache.get("read")), ("cache_write", cache.get("write"))):
            self.tokens[key] += whole(value) or 0
        cost = part.get("cost")
        if self.cost is not None and isinstance(cost, (int, float)) and cost >= 0:
            self.cost += float(cost)
        elif cost is not None:
            self.cost = None

    def finish(self) -> AgentRun:
        run = self.run
        run.turns = self.steps
        run.finish_reason = self.reason
        if self.steps:
            t = self.tokens
            run.input_tokens = t["input"] + t["cache_read"] + t["cache_write"]
            run.output_tokens = t["output"] + t["reasoning"]
            run.cost_usd, run.cost_source = self.cost, "opencode: its price table"
        run.engine.update({"ttft_basis": TTFT_BASIS, "steps": self.steps,
                           "usage": dict(self.tokens)})
        return settled(run, self.metered)


def config(where: Endpoint, request: DriverRequest) -> dict[str, Any]:
    """opencode's config (OPENCODE_CONFIG_CONTENT): one OpenAI-compatible provider, the
    model's window, a short system prompt and fewer tools."""
    limit = {"context": where.window or 8192, "output": request.settings.max_tokens or 1024}
    return {
        "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
        "model": f"{PROVIDER_ID}/{where.model}",
        "tools": dict.fromkeys(DISABLED_TOOLS, False),
        "agent": {"build": {"prompt": SHORT_PROMPT}},
        "provider": {PROVIDER_ID: {
            "npm": "@ai-sdk/openai-compatible", "name": PROVIDER_ID,
            "options": {"baseURL": f"{where.base_url}/v1", "apiKey": "none"},
            "models": {where.model: {"name": where.model, "tool_call": True,
                                     "limit": limit}}}},
    }


class OpencodeDriver:
    name = "opencode"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        preflight_provider(self.name, provider, local_ok=True)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("opencode", "BENCHRIG_OPENCODE_BIN", INSTALL_HINT)
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request,
                              "a short system prompt and bash, write, edit only")
        with endpoint(request, self.name) as where:
            flags = [*FLAGS, "-m", f"{PROVIDER_ID}/{where.model}"]
            fixed = {**FIXED_ENV, **no_proxy(os.environ),
                     "OPENCODE_CONFIG_CONTENT": json.dumps(config(where, request))}
            runtime = {"name": "opencode", "package": PACKAGE, "path": binary}
            effective: dict[str, Any] = {
                "agent_flags": flags, "agent_fixed_env": sorted(FIXED_ENV),
                "agent_prompt": window, "disabled_tools": list(DISABLED_TOOLS),
                "agent_endpoint": f"{where.base_url}/v1",
                # sent as max_tokens with every request (the model's output limit)
                "max_tokens": request.settings.max_tokens or 1024}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            parser = OpencodeParser(metered=where.session is not None)
            return with_meter(where, self.name, lambda: drive(
                request, agent="opencode", argv=[binary, *flags, prompt_text(request)],
                needs=Needs(fixed=fixed), parser=parser, runtime=runtime, effective=effective,
                load_time_s=where.load_time_s))
