"""What a driver hands back: the Transcript the model or agent produced, and its DriverOutput."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from benchrig.core.measurements import Metrics
from benchrig.textsafe import NAME_CAP, stored


@dataclass(frozen=True)
class Transcript:
    """What the model or agent produced."""

    answer: str
    thinking: str = ""
    finish_reason: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    turns: int | None = None
    # tool use (benchrig.suites.turns): each model reply with the messages it
    # answered, and why the runtime could not take tools at all (the case is then `unsupported`)
    tool_turns: tuple[Mapping[str, Any], ...] = ()
    unsupported: str | None = None

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
