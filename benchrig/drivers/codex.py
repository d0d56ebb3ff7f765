"""OpenAI Codex CLI unattended: `codex exec --json`, thread/turn/item events; it streams no
token deltas, so TTFT is the first completed item (and the result says so)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.core.transcript import DriverOutput
from benchrig.drivers import confine
from benchrig.drivers.agent import AgentRun, StreamParser, drive, prompt_text
from benchrig.drivers.agent_env import Needs, config_dir
from benchrig.drivers.agent_process import locate
from benchrig.drivers.base import DriverRequest

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

    def preflight(self, model: str, provider: str | None) -> None:
        if provider == "local":
            raise UsageError("codex cannot use the embedded model: it needs /v1/responses, "
                             "which llama-cpp-python's server does not serve; use pi for "
                             "provider local")

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate("codex", "BENCHRIG_CODEX_BIN", INSTALL_HINT)
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


def needs(host: Mapping[str, str]) -> Needs:
    """OpenAI's key and endpoint, and copies of codex's login and config ($CODEX_HOME, else
    ~/.codex). A provider from config.toml that reads another variable needs --pass-env."""
    folder = config_dir(host, "CODEX_HOME", ".codex")
    return Needs(variables=VARIABLES, files=(
        (folder / "auth.json", ".codex/auth.json"), (folder / "config.toml", ".codex/config.toml")))
