"""The driver contract: rendered messages and settings in, transcript and metrics out (public:
what a plugin driver implements)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from benchrig.core.deadline import Deadline
from benchrig.core.messages import Message
from benchrig.core.settings import Settings
from benchrig.core.task import TaskView
from benchrig.core.transcript import DriverOutput

__all__ = ["CAPABILITIES", "Driver", "DriverKind", "DriverRequest", "Progress",
           "SilentProgress", "capable"]

DriverKind = Literal["runtime", "agent", "replay"]


class Progress(Protocol):
    """Where a driver says what it is doing (the CLI draws it on stderr)."""

    def phase(self, text: str) -> None: ...

    def tokens(self, count: int) -> None: ...


class SilentProgress:
    def phase(self, text: str) -> None:
        pass

    def tokens(self, count: int) -> None:
        pass


@dataclass(frozen=True)
class DriverRequest:
    # the task without its hidden tests or expected answer (TaskSpec.view())
    task: TaskView
    messages: tuple[Message, ...]
    model: str
    provider: str | None
    settings: Settings
    progress: Progress = field(default_factory=SilentProgress)
    # Folders an agent must not see besides BenchRig's own (the run's results folder, the
    # task's folder and its hidden tests' folder).
    hidden_paths: tuple[Path, ...] = ()
    # Host variables the user passes to an agent besides its allow-list (--pass-env).
    pass_env: tuple[str, ...] = ()
    # The attempt's one deadline (settings.timeout_s from when the attempt started): every
    # phase spends from it (`deadline.spend(phase)`, `deadline.left()`), none gets a fresh
    # timeout_s. Made here when the caller gives none.
    deadline: Deadline = None  # type: ignore[assignment]
    # A window past the model's trained context is an error, not unused room: a context
    # step would measure positions the model never saw (a driver that can tell refuses it).
    strict_context: bool = False

    def __post_init__(self) -> None:
        if self.deadline is None:
            object.__setattr__(self, "deadline", Deadline(self.settings.timeout_s))


# What a driver may declare as a class attribute set to True (absent: False); the plan and
# the suites ask these, never a driver's name. `tool_turn` (a method) is the tools capability.
CAPABILITIES = (
    "in_process",  # runs the model inside BenchRig's process: one model loaded at a time
    "local_agent",  # an agent that can run against the embedded model, served to it by
                    # BenchRig's model gateway (its provider defaults to `local` there)
)


def capable(driver: object, capability: str) -> bool:
    """Whether `driver` declares `capability` (one of CAPABILITIES)."""
    return getattr(driver, capability, False) is True


class Driver(Protocol):
    """A registered way to run a model or an agent. Besides these, a driver declares its
    capabilities (CAPABILITIES) as class attributes."""

    name: str
    kind: DriverKind

    def preflight(self, model: str, provider: str | None) -> None:
        """Raise UsageError when `model`/`provider` cannot work, before anything runs."""

    def run(self, request: DriverRequest) -> DriverOutput:
        """Produce an answer; raise DriverError when it cannot (never for a wrong answer)."""
        ...
