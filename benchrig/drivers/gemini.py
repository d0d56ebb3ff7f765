"""Gemini CLI (npm `@google/gemini-cli`) unattended: `gemini -p <prompt> -o stream-json
--yolo`, its init/message/tool_use/tool_result/result events read for turns and tool calls;
pointed at a gateway session's Gemini front (`local`) or a Gemini-API base URL; usage
statistics, telemetry and update checks off, its system prompt and tools trimmed to fit 8k."""

from __future__ import annotations

import json
import os
from typing import Any

from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import AgentRun, StreamParser, drive, prompt_text
from benchrig.drivers.agent_clis import (
    LOCAL,
    SHORT_PROMPT,
    check_window,
    endpoint,
    no_proxy,
    preflight_provider,
    settled,
    with_meter,
)
from benchrig.drivers.agent_env import Needs, driver_home
from benchrig.drivers.agent_process import locate
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.qwen import no_context_files
from benchrig.jsonsafe import whole

PACKAGE = "@google/gemini-cli"
PINNED_VERSION = "0.61.0"
INSTALL_HINT = f"npm install -g {PACKAGE}@{PINNED_VERSION} (or `make agents-all` for .agents/)"
# Its own prompt and 15 tools come to 11,027 tokens; BenchRig's short prompt (GEMINI_SYSTEM_MD)
# and four tools, 2,217 (docs/agents.md).
CORE_TOOLS = ("write_file", "read_file", "replace", "run_shell_command")
PROMPT_OVERHEAD_TOKENS = 2_217
# ~/.gemini/settings.json in the private home: API-key auth (no Google login), no usage
# statistics (Clearcut), telemetry, update check, IDE link or checkpoints.
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                "disableAutoUpdate": True, "disableUpdateNag": True,
                "checkpointing": {"enabled": False}},
    "ide": {"enabled": False},
    "tools": {"core": list(CORE_TOOLS)},
}


# How it ends a session at `model.maxSessionTurns`: a result event naming this error, exit 53.
TURN_LIMIT, TURN_LIMIT_EXIT = "FatalTurnLimitedError", 53


class GeminiParser(StreamParser):
    """`-o stream-json` lines: init, message (user/assistant, deltas), tool_use, tool_result,
    error, result{status, stats}."""

    closing_event = "its result event"

    def __init__(self, metered: bool = False) -> None:
        super().__init__()
        self.metered = metered  # the gateway measures: the figures are replaced
        self.turns = 0
        self.answering = False  # inside a model turn (text or tool calls since the last result)
        self.text = ""
        self.tools: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        self.stats: dict[str, Any] | None = None

    def _turn(self) -> None:
        if not self.answering:
            self.answering, self.text = True, ""
            self.turns += 1

    def event(self, t: float, event: Any) -> None:
        kind = event.get("type")
        run = self.run
        if kind == "message" and event.get("role") == "assistant":
            self._turn()
            run.saw_answer(t)
            self.text += str(event.get("content") or "")
            if self.text.strip():
                run.answer = self.text
            run.deltas += 1
        elif kind == "tool_use":  # the tool runs now: later events may be its own
            self._turn()
            run.saw_answer(t)
            run.tool_began(t)
            call = {"id": event.get("tool_id"), "name": event.get("tool_name"),
                    "arguments": event.get("parameters")}
            self.tools[str(call["id"])] = call
            run.tool_calls.append(call)
        elif kind == "tool_result":
            self.answering = False
            if str(event.get("tool_id")) in self.tools:
                self.tools[str(event.get("tool_id"))]["is_error"] = (
                    event.get("status") != "success")
        elif kind == "error":
            self.warnings.append(f"{event.get('severity')}: {event.get('message')}"[:500])
        elif kind == "result":
            run.completed = True
            status = event.get("status")
            run.finish_reason = str(status) if status is not None else None
            self.stats = event.get("stats") if isinstance(event.get("stats"), dict) else None
            error = event.get("error") or {}
            if isinstance(error, dict) and error.get("type") == TURN_LIMIT:
                # its maxSessionTurns reached: a limit, like Claude Code's max turns
                run.finish_reason, run.limit_exit = "max_session_turns", TURN_LIMIT_EXIT
            elif status != "success":
                run.failure = f"status {status}: " + str(
                    error.get("message") if isinstance(error, dict) else error)[:500]
        elif kind == "init":
            run.engine.update({"session_id": event.get("session_id"),
                               "model": event.get("model")})

    def finish(self) -> AgentRun:
        run = self.run
        run.turns = self.turns
        stats = self.stats or {}
        if whole(stats.get("output_tokens")) is not None:
            run.input_tokens = whole(stats.get("input_tokens"))
            run.output_tokens = whole(stats.get("output_tokens"))
        run.cost_source = "gemini reports no cost"
        run.engine.update({"stats": self.stats, "warnings": self.warnings[:20]})
        return settled(run, self.metered)


class GeminiDriver:
    name = "gemini"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        preflight_provider(self.name, provider, local_ok=True)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("gemini", "BENCHRIG_GEMINI_BIN", INSTALL_HINT)
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request,
                              "a short system prompt and four tools")
        # `local`: a gateway session's Gemini front on the embedded model, which meters every
        # call; a base URL is a Gemini API as given (the gateway forwards OpenAI chat only)
        metered = request.provider == LOCAL
        # its files in its private home: the confined agent's /tmp is its own
        with endpoint(request, self.name, metered=metered) as where, driver_home() as home:
            settings = home / ".gemini" / "settings.json"
            settings.parent.mkdir(mode=0o700)
            settings.write_text(json.dumps(no_context_files(SETTINGS)))
            system = home / ".gemini" / "system.md"
            system.write_text(SHORT_PROMPT)
            flags = ["-o", "stream-json", "--yolo", "--skip-trust", "-m", where.model]
            fixed = {"GEMINI_API_KEY": "none", "GOOGLE_GEMINI_BASE_URL": where.base_url,
                     "GEMINI_SYSTEM_MD": str(system), **no_proxy(os.environ)}
            needs = Needs(fixed=fixed, home=home)
            effective: dict[str, Any] = {
                "agent_flags": flags, "agent_settings": SETTINGS, "agent_prompt": window,
                "agent_endpoint": where.base_url}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            parser = GeminiParser(metered=where.session is not None)
            return with_meter(where, self.name, lambda: drive(
                request, agent="gemini", argv=[binary, *flags, "-p", prompt_text(request)],
                needs=needs, parser=parser,
                runtime={"name": "gemini", "package": PACKAGE, "path": binary}, effective=effective,
                load_time_s=where.load_time_s))
