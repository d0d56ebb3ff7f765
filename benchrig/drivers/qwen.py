"""Qwen Code (npm `@qwen-code/qwen-code`) unattended: `qwen <prompt> -o stream-json
--include-partial-messages --yolo`, whose events are Claude Code's stream-json; pointed at an
OpenAI-compatible endpoint, telemetry and update checks off, trimmed to fit 8k."""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import AgentRun, drive, prompt_text
from benchrig.drivers.agent_clis import (
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
from benchrig.drivers.claude import ClaudeParser

PACKAGE = "@qwen-code/qwen-code"
PINNED_VERSION = "0.24.4"
INSTALL_HINT = f"npm install -g {PACKAGE}@{PINNED_VERSION} (or `make agents-all` for .agents/)"
# Two tools (a shell and a file writer) and BenchRig's short system prompt: its own prompt and
# its 14 tools come to 18,275 tokens; trimmed, 5,529 (docs/agents.md).
CORE_TOOLS = ("run_shell_command", "write_file")
EXCLUDED_TOOLS = ("agent", "skill", "tool_search", "get_goal", "update_goal", "list_agents",
                  "tool_call", "send_message", "enter_worktree", "exit_worktree",
                  "record_artifact", "report_findings", "task_stop")
PROMPT_OVERHEAD_TOKENS = 5_529
# ~/.qwen/settings.json in the private home: no telemetry, usage statistics, update check or
# IDE link; the OpenAI-compatible auth; no checkpoints; skills off.
SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "disableAutoUpdate": True,
                "disableUpdateNag": True, "checkpointing": {"enabled": False}},
    "ide": {"enabled": False},
    "skills": {"enabled": False},
}


def no_context_files(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with a context file name no one can have planted: Qwen Code otherwise
    reads QWEN.md and AGENTS.md from every folder above the workspace, /tmp included, where an
    earlier attempt's agent may have written instructions for this one."""
    return {**settings, "context": {"fileName": [f".benchrig-{secrets.token_hex(8)}.md"]}}


class QwenParser(ClaudeParser):
    """Claude Code's stream-json, as Qwen Code writes it; its figures only as reported_*,
    whole (the agent's word, never of record), while thinking stops at the first tool."""

    figures_of_record = False

    def __init__(self, metered: bool = False) -> None:
        super().__init__(streaming=True)
        self.metered = metered  # the gateway measures: the figures are replaced

    def finish(self) -> AgentRun:
        return settled(super().finish(), self.metered)


class QwenDriver:
    name = "qwen"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        preflight_provider(self.name, provider, local_ok=True)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("qwen", "BENCHRIG_QWEN_BIN", INSTALL_HINT)
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request,
                              "a short system prompt and two tools")
        # its files in its private home: the confined agent's /tmp is its own
        with endpoint(request, self.name) as where, driver_home() as home:
            settings = home / ".qwen" / "settings.json"
            settings.parent.mkdir(mode=0o700)
            settings.write_text(json.dumps(no_context_files(SETTINGS)))
            # an empty output-language file: qwen otherwise writes one of ~1,400 tokens into
            # its system prompt
            (home / ".qwen" / "output-language.md").write_text("")
            flags = ["-o", "stream-json", "--include-partial-messages", "--yolo",
                     "--auth-type", "openai", "-m", where.model, "--system-prompt",
                     SHORT_PROMPT, "--core-tools", *CORE_TOOLS, "--exclude-tools",
                     *EXCLUDED_TOOLS]
            fixed = {"OPENAI_API_KEY": "none", "OPENAI_BASE_URL": f"{where.base_url}/v1",
                     "OPENAI_MODEL": where.model, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
                     **no_proxy(os.environ)}
            needs = Needs(fixed=fixed, home=home)
            effective: dict[str, Any] = {
                "agent_flags": flags, "agent_settings": SETTINGS, "agent_prompt": window,
                "agent_endpoint": f"{where.base_url}/v1"}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            # the prompt before the options: --exclude-tools takes every word after it
            parser = QwenParser(metered=where.session is not None)
            return with_meter(where, self.name, lambda: drive(
                request, agent="qwen", argv=[binary, prompt_text(request), *flags], needs=needs,
                parser=parser, runtime={"name": "qwen", "package": PACKAGE, "path": binary},
                effective=effective, load_time_s=where.load_time_s))
