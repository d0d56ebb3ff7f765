"""mini-swe-agent (PyPI `mini-swe-agent`, its own venv in .agents/miniswe/) unattended:
`mini -y --exit-immediately -t <prompt> -o <trajectory>`; bash tool calls over unstreamed
OpenAI chat; its trajectory file is read afterwards for turns, tool calls and how it ended."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import AgentRun, StreamParser, amount, drive, prompt_text
from benchrig.drivers.agent_clis import (
    check_window,
    endpoint,
    locate_venv,
    no_proxy,
    preflight_provider,
    settled,
    with_meter,
)
from benchrig.drivers.agent_env import Needs, driver_home
from benchrig.drivers.base import DriverRequest

PACKAGE = "mini-swe-agent"
PINNED_VERSION = "2.4.6"
INSTALL_HINT = (f"`make agents-all` (PyPI {PACKAGE}=={PINNED_VERSION} in .agents/miniswe/), "
                f"or pipx install {PACKAGE}=={PINNED_VERSION}")
# -y: no confirmation of each command; --exit-immediately: no prompt when it submits;
# -l 0: no cost limit (its price lookup knows no local model)
FLAGS = ["-y", "--exit-immediately", "-l", "0"]
# MSWEA_CONFIGURED: no first-run setup wizard; litellm's price map stays local (it is fetched
# from the network at import otherwise); an unknown model's price is not an error; a failing
# model call is tried 3 times, not 10 with waits of up to a minute (a refusing endpoint would
# otherwise run the attempt into its timeout, and a timeout counts against the model).
FIXED_ENV = {"MSWEA_CONFIGURED": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
             "MSWEA_COST_TRACKING": "ignore_errors", "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "3"}
PROMPT_OVERHEAD_TOKENS = 975  # its first request (docs/agents.md)
# How a run that is not the agent's failure ends: it submitted, or a limit it reached.
ENDINGS = ("Submitted", "LimitsExceeded", "RepeatedFormatError", "FormatError",
           "TimeExceeded")
TTFT_BASIS = "none: mini-swe-agent prints no events (the gateway times its model calls)"


class MiniParser(StreamParser):
    """The trajectory mini writes when it exits: messages (assistant tool calls, tool
    results) and info (exit_status, model_stats)."""

    closing_event = "its trajectory file"

    def __init__(self, trajectory: Path, metered: bool = False) -> None:
        super().__init__()
        self.metered = metered  # the gateway measures: the figures are replaced
        self.trajectory = trajectory

    def event(self, t: float, event: Any) -> None:
        pass  # its stdout is text, kept in the sidecar as it is

    def finish(self) -> AgentRun:
        run = self.run
        run.thinking_chars = None
        try:
            data = json.loads(self.trajectory.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            # no trajectory: not completed, the exit code says why
            return settled(run, self.metered)
        info = data.get("info") or {}
        turns = 0
        for message in data.get("messages") or []:
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            turns += 1
            if isinstance(message.get("content"), str) and message["content"].strip():
                run.answer = message["content"]
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                run.tool_calls.append({"id": call.get("id"), "name": function.get("name"),
                                       "arguments": function.get("arguments")})
        status = str(info.get("exit_status"))
        run.turns = turns
        run.completed = True
        run.finish_reason = status
        if status not in ENDINGS:
            run.failure = f"exit status {status}: {str(info.get('submission') or '')[:500]}"
        stats = info.get("model_stats") or {}
        run.cost_usd = amount(stats.get("instance_cost"))
        run.cost_source = "mini-swe-agent: litellm's price table"
        run.engine.update({"ttft_basis": TTFT_BASIS, "exit_status": status,
                           "model_stats": stats, "mini_version": info.get("mini_version")})
        return settled(run, self.metered)


class MiniSweDriver:
    name = "miniswe"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        preflight_provider(self.name, provider, local_ok=True)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate_venv("mini", "miniswe", "BENCHRIG_MINISWE_BIN", INSTALL_HINT)
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request,
                              "its default config (mini.yaml)")
        # the trajectory in its private home: the confined agent's /tmp is its own
        with endpoint(request, self.name) as where, driver_home() as home:
            trajectory = home / "trajectory.json"
            max_tokens = request.settings.max_tokens or 1024
            # its default config, plus an answer budget (it sends none by itself)
            flags = [*FLAGS, "-m", f"openai/{where.model}", "-o", str(trajectory),
                     "-c", "mini.yaml", "-c", f"model.model_kwargs.max_tokens={max_tokens}"]
            fixed = {**FIXED_ENV, "OPENAI_API_KEY": "none",
                     "OPENAI_API_BASE": f"{where.base_url}/v1", **no_proxy(os.environ)}
            effective: dict[str, Any] = {
                "agent_flags": flags, "agent_fixed_env": sorted(FIXED_ENV),
                "agent_prompt": window, "agent_endpoint": f"{where.base_url}/v1",
                "max_tokens": max_tokens}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            parser = MiniParser(trajectory, metered=where.session is not None)
            return with_meter(where, self.name, lambda: drive(
                request, agent="miniswe", argv=[binary, *flags, "-t", prompt_text(request)],
                needs=Needs(fixed=fixed, home=home), parser=parser,
                runtime={"name": "mini-swe-agent", "package": PACKAGE, "path": binary},
                effective=effective, load_time_s=where.load_time_s))
