"""Claude Code unattended: `claude -p --output-format stream-json --verbose
--include-partial-messages` (token TTFT), or plain `--output-format json` (no TTFT); provider
`local` points it at a model gateway session fronting the embedded model, trimmed to fit."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import (
    AgentRun,
    StreamParser,
    amount,
    drive,
    message_text,
    prompt_text,
)
from benchrig.drivers.agent_clis import (
    LOCAL,
    SHORT_PROMPT,
    Endpoint,
    check_window,
    endpoint,
    no_proxy,
    with_meter,
)
from benchrig.drivers.agent_env import Needs, config_dir, host_home
from benchrig.drivers.agent_process import locate
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.local_model import preflight_local
from benchrig.jsonsafe import whole

INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"
OUTPUT_FORMATS = {
    None: "stream-json",
    "stream-json": "stream-json",
    "json": "json",  # the benchmark-runner's way: one result object, no TTFT
}
STREAM_FLAGS = ["--output-format", "stream-json", "--verbose", "--include-partial-messages"]
# Unattended: no permission prompts (as root this also needs IS_SANDBOX=1).
PERMISSION_FLAGS = ["--dangerously-skip-permissions"]
# What Claude Code reads from the environment to reach its API (the rest: --pass-env).
VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
             "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
             "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
             "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_OAUTH_TOKEN", "API_TIMEOUT_MS")
# Provider `local`: its own system prompt and 20-odd tools (~12,300 tokens) would not leave
# room for the task in SmolLM2's 8,192; a short prompt, three tools, no MCP servers, skills
# or settings files do. Bash, Write and Edit are enough to write and test solution.py.
LOCAL_TOOLS = "Bash,Write,Edit"
LOCAL_FLAGS = ["--system-prompt", SHORT_PROMPT, "--tools", LOCAL_TOOLS, "--strict-mcp-config",
               "--disable-slash-commands", "--setting-sources", ""]
LOCAL_TRIMMED = f"--system-prompt (BenchRig's short one), --tools {LOCAL_TOOLS}, no MCP, " \
                "no slash commands or skills, no settings files"
# Its first request with LOCAL_FLAGS, less the task (SmolLM2's tokenizer, on the real CLI:
# tests/drivers/test_claude_codex_local.py); untrimmed it is ~12,330.
PROMPT_OVERHEAD_TOKENS = 2_247
# Every model Claude Code may ask for (main, subagents, background) is the session's.
MODEL_VARIABLES = ("ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
                   "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
                   "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL")
# Limits the agent reached: its work is still checked, the finish reason says which.
LIMIT_SUBTYPES = ("error_max_turns", "error_max_budget_usd")


class ClaudeParser(StreamParser):
    """stream-json lines (system, assistant, user, stream_event, result), or the one result
    object (possibly inside an array) of `--output-format json`."""

    closing_event = "its result event"
    # Its token and cost figures are offered as measurements, so they stop at the first tool;
    # a subclass whose figures are only ever the agent's word (reported_*) keeps them whole.
    figures_of_record = True

    def __init__(self, streaming: bool) -> None:
        super().__init__()
        self.streaming = streaming
        self.result: dict[str, Any] | None = None
        self.usage_by_message: dict[str, dict[str, Any]] = {}
        self.text_by_message: dict[str, str] = {}
        self.last_message: str | None = None
        self.tool_ids: set[str] = set()
        self.ignored = 0  # message usages reported after a tool ran: not counted
        if not streaming:
            self.run.thinking_chars = None  # json mode shows no thinking

    def event(self, t: float, event: Any) -> None:
        if isinstance(event, list):  # json mode with --verbose prints every message
            for item in event:
                if isinstance(item, dict):
                    self.event(t, item)
            return
        kind = event.get("type")
        run = self.run
        if kind == "stream_event":
            self._stream_event(t, event.get("event") or {})
        elif kind == "assistant":
            self._assistant(t, event.get("message") or {})
        elif kind == "user" and self.tool_ids:  # a tool's result: it ran
            run.tool_began(t)
        elif kind == "result":
            self.result = event
        elif kind == "system" and event.get("subtype") == "init":
            run.engine.update({"model": event.get("model"),
                               "permission_mode": event.get("permissionMode"),
                               "claude_code_version": event.get("claude_code_version")})

    def _stream_event(self, t: float, inner: dict[str, Any]) -> None:
        run = self.run
        if inner.get("type") == "content_block_delta":
            delta = inner.get("delta") or {}
            if delta.get("type") == "thinking_delta":
                run.thought(t, delta.get("thinking") or "")
                run.deltas += 1
            elif delta.get("type") in ("text_delta", "input_json_delta"):
                run.saw_answer(t)
                run.deltas += 1
        elif inner.get("type") == "content_block_start" and (
                inner.get("content_block") or {}).get("type") in ("tool_use", "server_tool_use"):
            run.saw_answer(t)

    def _assistant(self, t: float, message: dict[str, Any]) -> None:
        # Claude Code sends one line per content block; lines of one message share its id
        # and repeat its usage, so usage is kept once per id.
        key = str(message.get("id") or f"line-{len(self.text_by_message)}")
        if isinstance(message.get("usage"), dict):
            if self.run.figures_trusted:
                self.usage_by_message[key] = message["usage"]
                self.run.decode_end_s = t
            else:
                self.ignored += 1
        text = message_text(message)
        if text:
            self.text_by_message[key] = self.text_by_message.get(key, "") + text
            self.last_message = key
        for block in message.get("content") or []:
            if (isinstance(block, dict) and block.get("type") == "tool_use"
                    and str(block.get("id")) not in self.tool_ids):
                self.tool_ids.add(str(block.get("id")))
                self.run.tool_calls.append({"id": block.get("id"), "name": block.get("name"),
                                            "arguments": block.get("input")})
                self.run.tool_began(t)  # the call is complete: Claude Code runs it now

    def _deduplicated(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for usage in self.usage_by_message.values():
            for name, value in usage.items():
                n = whole(value)
                if n is not None:
                    totals[name] = totals.get(name, 0) + n
        return totals

    def finish(self) -> AgentRun:
        run, result = self.run, self.result
        by_message = self._deduplicated()
        run.engine["usage_by_message"] = by_message or None
        run.engine["messages"] = len(self.usage_by_message)
        run.engine["usages_not_counted"] = self.ignored
        if self.last_message:
            run.answer = self.text_by_message[self.last_message]
        if result is None:
            return run
        run.completed = True
        subtype, is_error = result.get("subtype"), result.get("is_error")
        if isinstance(result.get("result"), str):
            run.answer = result["result"]
        run.turns = whole(result.get("num_turns"))
        stop = result.get("stop_reason")
        run.finish_reason = "length" if stop == "max_tokens" else (stop or subtype)
        if subtype in LIMIT_SUBTYPES:
            run.finish_reason = subtype
        elif is_error or subtype != "success":
            errors = result.get("errors") or []
            detail = run.answer if is_error and run.answer else "; ".join(map(str, errors))
            run.failure = f"subtype {subtype}, is_error {str(bool(is_error)).lower()}" + (
                f": {detail[:500]}" if detail else "")
        self._figures(result, by_message)
        run.engine.update({
            "subtype": subtype, "is_error": is_error, "stop_reason": stop,
            "num_turns": result.get("num_turns"), "duration_ms": result.get("duration_ms"),
            "duration_api_ms": result.get("duration_api_ms"), "usage": result.get("usage"),
            "model_usage": result.get("modelUsage"), "session_id": result.get("session_id"),
        })
        return run


    def _figures(self, result: dict[str, Any], by_message: dict[str, int]) -> None:
        """Tokens and cost: the result's session totals when no tool of the model ran (the
        result comes after every tool, which could have written it), else what the messages
        before the first tool reported."""
        run = self.run
        trusted = run.figures_trusted or not self.figures_of_record
        # The result's usage is the session total; per-message usage in stream-json may be a
        # snapshot taken while the message was still streaming.
        usage: dict[str, Any] | None = by_message
        if trusted and isinstance(result.get("usage"), dict):
            usage = result["usage"]
        if usage and whole(usage.get("output_tokens")) is not None:
            run.input_tokens = sum(whole(usage.get(k)) or 0 for k in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
            run.output_tokens = whole(usage.get("output_tokens"))
            run.input_source = run.output_source = "server"
        elif usage:
            run.unreadable("output_tokens", usage.get("output_tokens"))
        if not trusted:  # the cost comes only with the result, after the tools
            run.untrusted("input_tokens", "output_tokens", "cost_usd")
            return
        cost = amount(result.get("total_cost_usd"))
        if cost is None:
            run.unreadable("cost_usd", result.get("total_cost_usd"))
        else:
            run.cost_usd = cost
            run.cost_source = "claude: total_cost_usd, its estimate from a bundled price table"


class ClaudeDriver:
    name = "claude"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        if provider not in OUTPUT_FORMATS and provider != LOCAL:
            raise UsageError(
                f"claude: provider {provider!r} is not an output format nor `local`; use "
                "stream-json (the default: token TTFT), json (the benchmark-runner's mode, "
                "TTFT null) or local (the embedded model through the model gateway)")
        from benchrig.drivers.preflight import need_binary

        need_binary("claude", "BENCHRIG_CLAUDE_BIN", INSTALL_HINT)
        if provider == LOCAL:
            preflight_local("claude", model)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("claude", "BENCHRIG_CLAUDE_BIN", INSTALL_HINT)
        if request.provider == LOCAL:
            return self._local(request, binary)
        output_format = OUTPUT_FORMATS.get(request.provider, "stream-json")
        streaming = output_format == "stream-json"
        flags = ["-p", *(STREAM_FLAGS if streaming else ["--output-format", "json"]),
                 "--model", request.model, *PERMISSION_FLAGS]
        extra = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        if os.geteuid() == 0:
            extra["IS_SANDBOX"] = "1"  # bypass mode refuses to start as root without it
        runtime = {"name": "claude", "path": binary}
        effective = {"output_format": output_format, "agent_flags": flags,
                     "agent_fixed_env": extra}
        parser = ClaudeParser(streaming)
        if not streaming:
            parser.run.engine["ttft_basis"] = "none: --output-format json streams nothing"
        return drive(request, agent="claude", argv=[binary, *flags, prompt_text(request)],
                     needs=needs(os.environ, extra), parser=parser, runtime=runtime,
                     effective=effective)

    def _local(self, request: DriverRequest, binary: str) -> DriverOutput:
        """Through a gateway session of its own: the figures of record are the session's,
        Claude Code's own are kept as reported_*; nothing of the user's login is copied."""
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request, LOCAL_TRIMMED)
        with endpoint(request, self.name) as where:
            flags = ["-p", *STREAM_FLAGS, "--model", where.model, *PERMISSION_FLAGS,
                     *LOCAL_FLAGS]
            fixed = {**local_env(where), **no_proxy(os.environ)}
            runtime = {"name": "claude", "path": binary}
            effective: dict[str, Any] = {
                "output_format": "stream-json", "agent_flags": flags,
                "agent_fixed_env": sorted(fixed), "agent_prompt": window,
                "agent_endpoint": where.base_url}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            parser = ClaudeParser(True)
            return with_meter(where, self.name, lambda: drive(
                request, agent="claude", argv=[binary, *flags, prompt_text(request)],
                needs=Needs(fixed=fixed), parser=parser, runtime=runtime,
                effective=effective, load_time_s=where.load_time_s))


def local_env(where: Endpoint) -> dict[str, str]:
    """Claude Code pointed at the session: its root (Claude Code adds /v1/messages), a dummy
    token (the session's unguessable path is what admits it), every model slot the session's."""
    env = {"ANTHROPIC_BASE_URL": where.base_url, "ANTHROPIC_AUTH_TOKEN": "benchrig-gateway",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
           **dict.fromkeys(MODEL_VARIABLES, where.model)}
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # bypass mode refuses to start as root without it
    return env


def needs(host: Mapping[str, str], fixed: Mapping[str, str]) -> Needs:
    """Claude Code's keys, endpoint and model variables, and copies of its login
    (~/.claude/.credentials.json), settings and account state (~/.claude.json); with
    CLAUDE_CONFIG_DIR set, both files are read from that folder."""
    folder = config_dir(host, "CLAUDE_CONFIG_DIR", ".claude")
    state = folder / ".claude.json" if host.get("CLAUDE_CONFIG_DIR") else (
        host_home(host) / ".claude.json")
    return Needs(variables=VARIABLES, fixed=fixed, files=(
        (folder / ".credentials.json", ".claude/.credentials.json"),
        (folder / "settings.json", ".claude/settings.json"),
        (state, ".claude.json")))
