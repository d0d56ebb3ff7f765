"""Progress on stderr: a live status line on a terminal, plain phase lines elsewhere."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.status import Status

stderr = Console(stderr=True, highlight=False)


class AttemptProgress:
    """Shows what one attempt is doing: loading, generating (live token count), checking."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._status: Status | None = None
        self._last = 0.0
        self._phase = "starting"

    def __enter__(self) -> AttemptProgress:
        if stderr.is_terminal:
            self._status = stderr.status(f"{self.label}: starting")
            self._status.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._status is not None:
            self._status.stop()

    def phase(self, text: str) -> None:
        self._phase = text
        if self._status is not None:
            self._status.update(f"{self.label}: {text}")
        else:
            stderr.print(f"{self.label}: {text}")

    def tokens(self, count: int) -> None:
        now = time.monotonic()
        if self._status is not None and now - self._last > 0.1:
            self._last = now
            self._status.update(f"{self.label}: {self._phase} · {count} tokens")


def info(text: str) -> None:
    stderr.print(text)


def warn(text: str) -> None:
    stderr.print(f"[yellow]warning:[/yellow] {text}")


def error(text: str) -> None:
    stderr.print(f"[red]error:[/red] {text}", soft_wrap=True)
