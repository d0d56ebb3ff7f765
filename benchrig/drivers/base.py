"""The driver contract: rendered messages and settings in, transcript and metrics out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Protocol

from benchrig.deadline import Deadline
from benchrig.metrics import Metrics
from benchrig.prompt import Message
from benchrig.spec import TaskSpec
from benchrig.textsafe import NAME_CAP, stored

DriverKind = Literal["runtime", "agent", "replay"]


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
    task: TaskSpec
    messages: tuple[Message, ...]
    model: str
    provider: str | None
    settings: Settings
    progress: Progress = field(default_factory=SilentProgress)
    # Folders an agent must not see besides BenchRig's own (the run's results folder).
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


@dataclass(frozen=True)
class Transcript:
    """What the model or agent produced."""

    answer: str
    thinking: str = ""
    finish_reason: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    turns: int | None = None

    def __post_init__(self) -> None:
        # Every driver's text enters here: made safe to store once (no lone surrogate from
        # a `"\ud800"` JSON escape, bounded size); the checks see the same text.
        object.__setattr__(self, "answer", stored(self.answer))
        object.__setattr__(self, "thinking", stored(self.thinking))
        if self.finish_reason is not None:
            object.__setattr__(self, "finish_reason", stored(self.finish_reason, NAME_CAP))


@dataclass(frozen=True)
class DriverOutput:
    transcript: Transcript
    metrics: Metrics
    runtime: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    effective: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # the raw, timestamped stream (agents): appended to the result's .transcript.jsonl sidecar
    events: tuple[Mapping[str, Any], ...] = ()


class Driver(Protocol):
    """A registered way to run a model or an agent."""

    name: str
    kind: DriverKind

    def preflight(self, model: str, provider: str | None) -> None:
        """Raise UsageError when `model`/`provider` cannot work, before anything runs."""

    def run(self, request: DriverRequest) -> DriverOutput:
        """Produce an answer; raise DriverError when it cannot (never for a wrong answer)."""
        ...
