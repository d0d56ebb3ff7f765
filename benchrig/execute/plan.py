"""The plan of a run: every (model, task, run) as an AttemptSpec with its scheduling rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.execute.base import AttemptSpec
from benchrig.local.model import KNOWN_MODELS

# Suites whose figures are timings of the machine itself: nothing else may share it.
EXCLUSIVE_SUITES = ("speed", "context")
# Drivers that run the model inside BenchRig's own process (one model loaded at a time).
IN_PROCESS_DRIVERS = ("llamacpp",)
LOCAL_PROVIDER = "local"  # an agent against the embedded model, served by BenchRig
EMBEDDED_LANE = "embedded model"
# Agents that can run against the embedded model (BenchRig serves it to them: OpenAI chat).
LOCAL_AGENTS = ("pi", "opencode", "qwen", "aider", "miniswe")


def embedded(model: str) -> bool:
    """Whether `model` names an embedded model: one BenchRig ships, or a .gguf file."""
    return model in KNOWN_MODELS or model.endswith(".gguf")


def default_provider(driver: str, provider: str | None, models: list[str]) -> str | None:
    """The provider when none is given: `local` for an agent that can use the embedded model
    when every model is one (`scripts/run.sh lru-cache smollm2` runs pi on it), else none."""
    if provider is None and driver in LOCAL_AGENTS and models and all(map(embedded, models)):
        return LOCAL_PROVIDER
    return provider


def lane(driver: str, provider: str | None) -> str | None:
    """The lane an attempt runs in: every attempt on the embedded model (in process, or an
    agent served by it) shares one, so two never share the CPU; others run freely."""
    return EMBEDDED_LANE if driver in IN_PROCESS_DRIVERS or provider == LOCAL_PROVIDER else None


def attempt_specs(keys: Iterable[tuple[TaskSpec, str, int]], driver: str, agent: str,
                  provider: str | None, settings: Callable[[TaskSpec, str, int], Settings],
                  results_dir: Path, pass_env: tuple[str, ...] = (),
                  label: str | None = None, jobs: int = 1) -> list[AttemptSpec]:
    """The plan's (task, model, run index) keys as attempt descriptions, in their order."""
    where = lane(driver, provider)
    return [AttemptSpec(index, task, model, driver, agent, provider,
                        settings(task, model, run), run, results_dir, pass_env, label, jobs,
                        where, task.suite in EXCLUSIVE_SUITES)
            for index, (task, model, run) in enumerate(keys)]
