"""Settings: the generation settings of a run; every result records the effective values."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

# --runs > 1 at temperature 0 repeats one greedy answer. Repeats are samples, as in Inspect
# AI's epochs and lm-eval-harness's repeats (both at a sampling temperature): a task with
# no temperature of its own is then sent this one, the temperature the Codex paper and
# bigcode-evaluation-harness use for pass@k at small k, with seed + run per run.
SAMPLING_TEMPERATURE = 0.2
# A coding agent sends 1–6k tokens of its own before the task (docs/agents.md), and a
# conversation grows with every tool result: on the embedded model an agent gets
# SmolLM2's trained context unless the window was asked for.
AGENT_CONTEXT = 8192


@dataclass(frozen=True)
class Settings:
    """Generation settings; every result records the effective values."""

    temperature: float = 0.0
    max_tokens: int = 1024
    context_size: int = 4096
    think: bool | None = None
    threads: int | None = None
    seed: int | None = 0
    timeout_s: float = 300.0
    # Where max_tokens, think and context_size came from (benchrig.toml, task, command
    # line, or grown to fit the budget).
    thinking_model: bool | None = None
    max_tokens_multiplier: int = 1
    think_source: str | None = None
    context_size_source: str | None = None
    config_file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def for_local_agent(settings: Settings) -> Settings:
    """An agent's settings on the embedded model: the default window widened to
    AGENT_CONTEXT (a window from the command line, the task or the budget is kept)."""
    if settings.context_size_source != "default" or settings.context_size >= AGENT_CONTEXT:
        return settings
    return replace(settings, context_size=AGENT_CONTEXT,
                   context_size_source=f"agent on the embedded model ({AGENT_CONTEXT})")
