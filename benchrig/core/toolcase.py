"""Tool use: a case's planned turns, one model reply in a tool conversation, and the
exception a runtime raises when it cannot take tools at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchrig.core.errors import BenchRigError
from benchrig.core.measurements import TokenSource
from benchrig.textsafe import stored


class ToolsUnsupported(BenchRigError):
    """This driver, runtime or model cannot take tools (an agent driver, an Ollama model
    without the `tools` capability, a server that refuses `tools`): the case is
    `unsupported`, kept out of every eligible denominator and counted apart."""


@dataclass(frozen=True)
class PlannedTurn:
    """One turn a case plans: an optional user message before the model replies, then
    either the one call expected (`call`: name and exact arguments, with the fixture
    `result` fed back) or a plain-text answer (`answer`: patterns that must all match)."""

    user: str | None
    call: Mapping[str, Any] | None
    result: Any = None
    answer: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return "call" if self.call is not None else "answer"


def planned_turns(frontmatter: Mapping[str, Any]) -> tuple[PlannedTurn, ...]:
    """The `turns` of a (schema-valid) tool case, in order."""
    turns: Sequence[Any] = frontmatter.get("turns") or ()
    return tuple(PlannedTurn(user=t.get("user"), call=t.get("call"), result=t.get("result"),
                             answer=tuple(t.get("answer") or ())) for t in turns)


def tool_definitions(frontmatter: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The case's tools as OpenAI-style function definitions (what every runtime is sent)."""
    return [dict(tool) for tool in frontmatter.get("tools") or ()]


def is_tool_case(frontmatter: Mapping[str, Any]) -> bool:
    return bool(frontmatter.get("tools")) and bool(frontmatter.get("turns"))


@dataclass(frozen=True)
class ToolReply:
    """One model reply in a tool conversation, as received: its text, and each call as the
    runtime gave it (`name`, `arguments`: the JSON text an OpenAI server sends, or the object
    Ollama sends; `id` when given). Timing: request wall time; tokens when reported."""

    text: str
    calls: tuple[Mapping[str, Any], ...] = ()
    finish_reason: str | None = None
    wall_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_source: TokenSource = "server"  # `counted` where BenchRig's own process counts
    raw: Mapping[str, Any] = field(default_factory=dict)  # the runtime's own reply data
    # what the result's environment and settings record (the last reply's stand)
    runtime: Mapping[str, Any] = field(default_factory=dict)
    effective: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", stored(self.text))

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "calls": [dict(c) for c in self.calls],
                "finish_reason": self.finish_reason, "wall_s": self.wall_s,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
