"""aider (PyPI `aider-chat`, its own venv in .agents/aider/) unattended: `aider --message
<prompt> --yes-always solution.py` with the `whole` edit format; it prints no events, so its
chat history file is read afterwards for replies, edits and its own token counts."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from benchrig.core.transcript import DriverOutput
from benchrig.drivers.agent import AgentRun, StreamParser, drive, prompt_text
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

PACKAGE = "aider-chat"
PINNED_VERSION = "0.86.2"
INSTALL_HINT = (f"`make agents-all` (PyPI {PACKAGE}=={PINNED_VERSION} in .agents/aider/), "
                f"or pipx install {PACKAGE}=={PINNED_VERSION}")
# Offline and unattended: no update check, release notes, analytics, git, URL scraping of the
# prompt (it would fetch the page), shell suggestions, lint or test runs.
FLAGS = ["--edit-format", "whole", "--yes-always", "--no-git", "--no-auto-commits",
         "--no-check-update", "--no-show-release-notes", "--analytics-disable",
         "--no-pretty", "--no-fancy-input", "--no-detect-urls", "--no-suggest-shell-commands",
         "--no-auto-lint", "--no-auto-test", "--no-show-model-warnings", "--map-tokens", "0",
         "--encoding", "utf-8"]
# litellm fetches its model price map from the network at import unless told not to
# BROWSER: with --yes-always aider says yes to "Open URL for more info?"; nothing opens.
FIXED_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "AIDER_ANALYTICS": "false",
             "BROWSER": "/usr/bin/true"}
PROMPT_OVERHEAD_TOKENS = 830  # its first request with these flags (docs/agents.md)
LIMIT = re.compile(r"^> Model .* has hit a token limit!")
TOKENS = re.compile(r"^> Tokens: ([\d.,]+)(k?) sent, ([\d.,]+)(k?) received")
APPLIED = re.compile(r"^> Applied edit to (.+?)\s*$")
TTFT_BASIS = "none: aider prints no events (the gateway times its model calls)"


def _count(number: str, kilo: str) -> int:
    return round(float(number.replace(",", "")) * (1000 if kilo else 1))


class AiderParser(StreamParser):
    """aider's chat history (markdown) once it exits: a `> Tokens:` line per model reply (or
    `has hit a token limit!` for one cut at max_tokens), `> Applied edit to F` per edit, the
    reply text between them."""

    closing_event = "a model reply in its chat history"

    def __init__(self, history: Path, metered: bool = False) -> None:
        super().__init__()
        self.metered = metered  # the gateway measures: the figures are replaced
        self.history = history

    def event(self, t: float, event: Any) -> None:
        pass  # aider's stdout is text, kept in the sidecar as it is

    def finish(self) -> AgentRun:
        run = self.run
        run.thinking_chars = None
        try:
            lines = self.history.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        sent = received = replies = 0
        limited = False
        reply: list[str] = []
        notes: list[str] = []
        for line in lines:
            if (tokens := TOKENS.match(line)) is not None:
                replies += 1
                sent += _count(tokens.group(1), tokens.group(2))
                received += _count(tokens.group(3), tokens.group(4))
                if "".join(reply).strip():
                    run.answer = "\n".join(reply).strip()
                reply = []
            elif LIMIT.match(line) is not None:  # the reply stopped at max_tokens: a reply
                replies += 1
                limited = True
                if "".join(reply).strip():
                    run.answer = "\n".join(reply).strip()
                reply = []
            elif (applied := APPLIED.match(line)) is not None:
                run.tool_calls.append({"id": f"edit-{len(run.tool_calls) + 1}", "name": "edit",
                                       "arguments": {"file": applied.group(1)}})
            elif line.startswith("#### "):
                reply = []  # the user's message: the reply follows it
            elif line.startswith("> "):
                notes.append(line[2:].strip())
            else:
                reply.append(line)
        run.turns = replies
        run.completed = replies > 0
        if replies:
            run.input_tokens, run.output_tokens = sent, received
        elif notes:  # no reply: aider's last notes say why (an API error, usually)
            run.failure = "no model reply; " + " | ".join(notes[-3:])[:600]
        run.finish_reason = ("length" if limited else "stop") if replies else None
        run.cost_source = "aider: its own count"
        run.engine.update({"ttft_basis": TTFT_BASIS, "replies": replies,
                           "edits": len(run.tool_calls)})
        return settled(run, self.metered)


class AiderDriver:
    name = "aider"
    kind = "agent"
    local_agent = True  # the gateway serves it the embedded model

    def preflight(self, model: str, provider: str | None) -> None:
        preflight_provider(self.name, provider, local_ok=True)

    def run(self, request: DriverRequest) -> DriverOutput:
        binary = locate_venv("aider", "aider", "BENCHRIG_AIDER_BIN", INSTALL_HINT)
        window = check_window(self.name, PROMPT_OVERHEAD_TOKENS, request,
                              "its own flags (whole edit format, no repo map)")
        # its files in its private home: the confined agent's /tmp is its own
        with endpoint(request, self.name) as where, driver_home() as scratch:
            model = f"openai/{where.model}"
            # the model's window and price for aider (it would otherwise look the model up)
            metadata = Path(scratch, "model-metadata.json")
            metadata.write_text(json.dumps({model: {
                "max_input_tokens": where.window or 8192,
                "max_output_tokens": request.settings.max_tokens or 1024,
                "input_cost_per_token": 0, "output_cost_per_token": 0,
                "litellm_provider": "openai", "mode": "chat"}}))
            # the answer's budget: aider sends none by itself, and a small model then writes
            # until its window is full
            max_tokens = request.settings.max_tokens or 1024
            model_settings = Path(scratch, "model-settings.yml")  # JSON is YAML
            model_settings.write_text(json.dumps([{
                "name": model, "edit_format": "whole",
                "extra_params": {"max_tokens": max_tokens}}]))
            history = Path(scratch, "chat.md")
            flags = [*FLAGS, "--model", model, "--openai-api-base", f"{where.base_url}/v1",
                     "--openai-api-key", "none", "--model-metadata-file", str(metadata),
                     "--model-settings-file", str(model_settings),
                     "--chat-history-file", str(history),
                     "--input-history-file", str(Path(scratch, "input.txt"))]
            effective: dict[str, Any] = {
                "agent_flags": flags, "agent_fixed_env": sorted(FIXED_ENV),
                "agent_prompt": window, "edit_format": "whole", "max_tokens": max_tokens,
                "agent_endpoint": f"{where.base_url}/v1"}
            if where.local:
                effective.update({"context_size": where.window, "server": where.server})
            solution = request.task.solution_file
            parser = AiderParser(history, metered=where.session is not None)
            return with_meter(where, self.name, lambda: drive(
                request, agent="aider",
                argv=[binary, *flags, "--message", prompt_text(request), solution],
                needs=Needs(fixed={**FIXED_ENV, **no_proxy(os.environ)}, home=scratch),
                parser=parser,
                runtime={"name": "aider", "package": PACKAGE, "path": binary}, effective=effective,
                load_time_s=where.load_time_s))
