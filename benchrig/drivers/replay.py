"""Replay: the answer is read from a file, to score saved outputs or prove a task pack."""

from __future__ import annotations

from pathlib import Path

from benchrig.core.errors import DriverError, UsageError
from benchrig.core.metrics import Metrics
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.base import DriverRequest
from benchrig.thinking import split_thinking


class ReplayDriver:
    """Provider slot = the answer file. No model runs, so every metric is null."""

    name = "replay"
    kind = "replay"

    def preflight(self, model: str, provider: str | None) -> None:
        if not provider:
            raise UsageError("replay needs the answer file in the provider slot: "
                             "scripts/run.sh <task> <label> replay path/to/answer.md")
        if not Path(provider).is_file():
            raise UsageError(f"replay: answer file not found: {provider}")

    def run(self, request: DriverRequest) -> DriverOutput:
        path = Path(request.provider or "")
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
