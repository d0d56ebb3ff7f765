"""Replay: the answer is read from a file, to score saved outputs or prove a task pack. For a
tool case the file is a whole multi-turn transcript: `{"turns": [{"text": …, "tool_calls":
[{"name": …, "arguments": …}]}, …]}`, one entry per model reply (docs/suites.md#tool-use)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchrig.core.errors import DriverError, UsageError
from benchrig.core.measurements import Metrics
from benchrig.core.toolcase import ToolReply
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.base import DriverRequest
from benchrig.thinking import split_thinking


def answer_file(provider: str | None, task_id: str) -> Path:
    """The provider slot's answer file; a folder holds one per task, `<task id>.md` (as the
    reference answers in tasks/.references/ and a pack's .references/)."""
    path = Path(provider or "")
    return path / f"{task_id}.md" if path.is_dir() else path


class ReplayDriver:
    """Provider slot = the answer file, or a folder of them (`<task id>.md`). No model runs,
    so every metric is null."""

    name = "replay"
    kind = "replay"

    def preflight(self, model: str, provider: str | None) -> None:
        if not provider:
            raise UsageError("replay needs the answer file in the provider slot: "
                             "scripts/run.sh <task> <label> replay path/to/answer.md")
        if not Path(provider).is_file() and not Path(provider).is_dir():
            raise UsageError(f"replay: answer file not found: {provider}")

    def run(self, request: DriverRequest) -> DriverOutput:
        path = answer_file(request.provider, request.task.id)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DriverError("infra", f"cannot read answer file {path}: {exc}") from None
        thinking, answer, _ = split_thinking(text)  # a raw response: split as live
        return DriverOutput(
            transcript=Transcript(answer=answer, thinking=thinking),
            metrics=Metrics(),
            runtime={"name": "replay", "version": None, "answer_file": str(path)},
        )

    def tool_turn(self, request: DriverRequest, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]]) -> ToolReply:
        """The reply recorded for this point of the conversation: the k-th entry of `turns`,
        k being the number of replies the model has given so far."""
        path = Path(request.provider or "")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise DriverError("infra", f"cannot read transcript file {path}: {exc}") from None
        turns = data.get("turns") if isinstance(data, dict) else None
        if not isinstance(turns, list):
            raise DriverError("infra", f"{path}: a tool transcript is an object with a "
                              "`turns` list")
        index = sum(1 for m in messages if m.get("role") == "assistant")
        if index >= len(turns) or not isinstance(turns[index], dict):
            raise DriverError("infra", f"{path}: no recorded reply for turn {index + 1}")
        turn = turns[index]
        calls = tuple(dict(c) for c in turn.get("tool_calls") or () if isinstance(c, dict))
        return ToolReply(text=str(turn.get("text") or ""), calls=calls,
                         finish_reason="tool_calls" if calls else "stop",
                         runtime={"name": "replay", "version": None, "answer_file": str(path)})
