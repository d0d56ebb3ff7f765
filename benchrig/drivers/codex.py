"""OpenAI Codex CLI unattended: `codex exec --json`, thread/turn/item events; it streams no
token deltas, so TTFT is the first completed item (and the result says so). Provider `local`:
a private CODEX_HOME whose `benchrig` provider is a model gateway session, trimmed to fit."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchrig.core.transcript import DriverOutput
from benchrig.drivers import confine
from benchrig.drivers.agent import AgentRun, StreamParser, drive, prompt_text
from benchrig.drivers.agent_clis import (
    LOCAL,
    SHORT_PROMPT,
    Endpoint,
    check_window,
    endpoint,
    no_proxy,
    with_meter,
)
from benchrig.drivers.agent_env import Needs, config_dir, driver_home
from benchrig.drivers.agent_process import locate
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.local_model import preflight_local

INSTALL_HINT = "npm install -g @openai/codex"
FLAGS = ["exec", "--json", "--skip-git-repo-check", "--ephemeral"]
# Confined by BenchRig, Codex's own sandbox cannot start (its bubblewrap cannot map a uid
# inside ours: every shell command then fails inside the turn, and codex still exits 0), so
# BenchRig's confinement is the sandbox. Unconfined, Codex's own keeps it in the workspace.
CONFINED_SANDBOX = ["--dangerously-bypass-approvals-and-sandbox"]
OWN_SANDBOX = ["--sandbox", "workspace-write"]
# What a shell command prints when Codex's own sandbox could not start around it
SANDBOX_FAILURES = re.compile(r"bwrap: |landlock|seccomp|Sandbox\(|sandbox (?:denied|error)",
                              re.IGNORECASE)
VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT",
             "CODEX_API_KEY")
TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search")
PROVIDER_ID = "benchrig"
# Provider `local`: its own instructions and tools (~10,000 tokens) would not leave room for the
# task in SmolLM2's 8,192. BenchRig's short instructions, no permission, environment, apps or
# AGENTS.md sections, and no subagent, goal, image, app, plugin or web-search tools: what
# remains is exec_command (the shell), write_stdin and request_user_input.
LOCAL_CONFIG = {"check_for_update_on_startup": "false", "web_search": '"disabled"',
                "include_permissions_instructions": "false",
                "include_environment_context": "false", "include_apps_instructions": "false",
                "project_doc_max_bytes": "0"}
DISABLED_FEATURES = ("multi_agent", "goals", "view_image", "apps", "plugins",
                     "image_generation", "skill_search", "tool_suggest")
LOCAL_TRIMMED = ("model_instructions_file (BenchRig's short prompt), no permission, environment "
                 "or apps instructions, no AGENTS.md, features off: " + ", ".join(
                     DISABLED_FEATURES) + "; web search disabled")
# Its first request with that config, less the task (SmolLM2's tokenizer, on the real CLI:
# tests/drivers/test_claude_codex_local.py); untrimmed it is ~10,030.
PROMPT_OVERHEAD_TOKENS = 2_295
TTFT_BASIS = "first completed item: codex exec --json streams no token deltas"


class CodexParser(StreamParser):
    """`codex exec --json` lines: thread.started, turn.*, item.started|updated|completed, error."""

    closing_event = "turn.completed"

    def __init__(self) -> None:
        super().__init__()
        self.ignored: dict[str, Any] | None = None  # the usage reported after a tool ran
        self.turns = 0
        self.failed: str | None = None
        self.pending_error: str | None = None  # an error event not followed by a finished turn
        self.sandbox_failure: str | None = None  # a command Codex's own sandbox failed to run

    def event(self, t: float, event: Any) -> None:
        kind = event.get("type")
        run = self.run
        if kind == "item.completed":
            self._item(t, event.get("item") or {})
        elif kind == "item.started" and (event.get("item") or {}).get("type") in TOOL_ITEMS:
            run.tool_began(t)
        elif kind == "turn.completed":
            self.turns += 1
            self.pending_error = None
            if isinstance(event.get("usage"), dict):
                # Codex reports usage only when its turn ends, after every tool the model ran
                # in it, and not every tool as an item (exec_command in 0.171 shows none): a
                # tool may have printed this line itself, so it is never counted
                self.ignored = event["usage"]
            run.completed = True
        elif kind == "turn.failed":
            self.failed = str((event.get("error") or {}).get("message") or "turn failed")
            run.completed = True
        elif kind == "error":
            self.pending_error = str(event.get("message") or "error")
        elif kind == "thread.started":
            run.engine["thread_id"] = event.get("thread_id")

    def _item(self, t: float, item: dict[str, Any]) -> None:
        run = self.run
        kind = item.get("type")
        if kind == "reasoning":
            run.thought(t, item.get("text") or "")
        elif kind == "agent_message":
            run.saw_answer(t)
            run.answer = str(item.get("text") or "")
        elif kind in TOOL_ITEMS:
            run.saw_answer(t)
            run.tool_began(t)
            details = {k: v for k, v in item.items()
                       if k not in ("id", "type", "aggregated_output")}
            run.tool_calls.append({"id": item.get("id"), "name": kind, "arguments": details})
            output = str(item.get("aggregated_output") or "")
            if (kind == "command_execution" and item.get("exit_code") not in (0, None)
                    and SANDBOX_FAILURES.search(output) and self.sandbox_failure is None):
                self.sandbox_failure = output.strip()[:300]
        run.deltas += 1

    def finish(self) -> AgentRun:
        run = self.run
        run.turns = self.turns
        run.failure = self.failed or self.pending_error or (
            f"its own sandbox could not run the model's command: {self.sandbox_failure}"
            if self.sandbox_failure else None)
        run.finish_reason = "failed" if self.failed else ("completed" if run.completed else None)
        if self.ignored is not None:
            for name in ("input_tokens", "output_tokens"):
                run.rejected[name] = (
                    "codex reports usage only when its turn ends, after the tools the model "
                    "ran in it (a tool can write forged events into its output): not counted")
        run.cost_source = "codex reports no cost"
        run.engine.update({"ttft_basis": TTFT_BASIS, "usage_not_counted": self.ignored,
                           "items": run.deltas})
        return run


class CodexDriver:
    name = "codex"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        from benchrig.drivers.preflight import need_binary

        need_binary("codex", "BENCHRIG_CODEX_BIN", INSTALL_HINT)
        if provider == LOCAL:
            preflight_local("codex", model)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("codex", "BENCHRIG_CODEX_BIN", INSTALL_HINT)
        if request.provider == LOCAL:
            return self._local(request, binary)
        confined = confine.detect().available
        flags = [*FLAGS, *(CONFINED_SANDBOX if confined else OWN_SANDBOX), "-m", request.model]
        if request.provider:  # a model_provider id from the user's ~/.codex/config.toml
            flags += ["-c", f"model_provider={request.provider}"]
        runtime = {"name": "codex", "path": binary}
        effective = {"agent_flags": flags, "codex_sandbox": (
            "none of its own: BenchRig's confinement is the sandbox (Codex's bubblewrap cannot "
            "start inside it)" if confined else "workspace-write (Codex's own)")}
        return drive(request, agent="codex", argv=[binary, *flags, prompt_text(request)],
                     needs=needs(os.environ), parser=CodexParser(), runtime=runtime,
                     effective=effective)

    def _local(self, request: DriverRequest, binary: str) -> DriverOutput:
        """Through a gateway session of its own, from a private CODEX_HOME (the user's
        ~/.codex is never read): the figures of record are the session's."""
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request, LOCAL_TRIMMED)
        confined = confine.detect().available
        with endpoint(request, self.name) as where, codex_home(where, request) as home:
            flags = [*FLAGS, *(CONFINED_SANDBOX if confined else OWN_SANDBOX),
                     "-m", where.model]
            fixed = {"CODEX_HOME": str(home / ".codex"), **no_proxy(os.environ)}
            runtime = {"name": "codex", "path": binary}
            effective: dict[str, Any] = {
                "agent_flags": flags, "agent_prompt": window,
                "agent_config": (home / ".codex" / "config.toml").read_text(),
                "agent_endpoint": f"{where.base_url}/v1", "codex_sandbox": (
                    "none of its own: BenchRig's confinement is the sandbox" if confined
                    else "workspace-write (Codex's own)")}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            return with_meter(where, self.name, lambda: drive(
                request, agent="codex", argv=[binary, *flags, prompt_text(request)],
                needs=Needs(fixed=fixed, home=home), parser=CodexParser(), runtime=runtime,
                effective=effective, load_time_s=where.load_time_s))


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    return json.dumps(text)


@contextmanager
def codex_home(where: Endpoint, request: DriverRequest) -> Iterator[Path]:
    """A private home whose .codex/config.toml names only the session as its provider, with
    the trimmed prompt; removed afterwards."""
    with driver_home() as home:
        folder = home / ".codex"
        folder.mkdir()
        instructions = folder / "instructions.md"
        instructions.write_text(SHORT_PROMPT)
        lines = [f"model = {toml_string(where.model)}", f'model_provider = "{PROVIDER_ID}"',
                 f"model_instructions_file = {toml_string(str(instructions))}",
                 f"model_context_window = {where.window or request.settings.context_size}",
                 *(f"{key} = {value}" for key, value in LOCAL_CONFIG.items()),
                 "[features]", *(f"{name} = false" for name in DISABLED_FEATURES),
                 f"[model_providers.{PROVIDER_ID}]", f'name = "{PROVIDER_ID}"',
                 f"base_url = {toml_string(where.base_url + '/v1')}", 'wire_api = "responses"',
                 "request_max_retries = 0", "stream_max_retries = 0"]
        (folder / "config.toml").write_text("\n".join(lines) + "\n")
        yield home


def needs(host: Mapping[str, str]) -> Needs:
    """OpenAI's key and endpoint, and copies of codex's login and config ($CODEX_HOME, else
    ~/.codex). A provider from config.toml that reads another variable needs --pass-env."""
    folder = config_dir(host, "CODEX_HOME", ".codex")
    return Needs(variables=VARIABLES, files=(
        (folder / "auth.json", ".codex/auth.json"), (folder / "config.toml", ".codex/config.toml")))
