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

__all__ = ["Driver", "DriverKind", "DriverRequest", "Progress", "SilentProgress"]

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

    def __post_init__(self) -> None:
        if self.deadline is None:
            object.__setattr__(self, "deadline", Deadline(self.settings.timeout_s))


class Driver(Protocol):
    """A registered way to run a model or an agent."""

    name: str
    kind: DriverKind

    def preflight(self, model: str, provider: str | None) -> None:
        """Raise UsageError when `model`/`provider` cannot work, before anything runs."""

    def run(self, request: DriverRequest) -> DriverOutput:
        """Produce an answer; raise DriverError when it cannot (never for a wrong answer)."""
        ...
