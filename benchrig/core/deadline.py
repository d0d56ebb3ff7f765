"""One attempt's deadline: a monotonic start and a budget that every phase spends from."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# How far past its timeout_s an attempt may end (docs/results.md#deadline): the time to
# notice the deadline and stop (one llama.cpp chunk of prefill, one HTTP read, a socket
# shut down), not a second budget.
GRACE_S = 0.5


@dataclass
class Deadline:
    """`budget_s` seconds from `started` (time.monotonic). `phase` names what is spending
    now (`spend`), so a timeout can say which phase ran out. Only the phase changes."""

    budget_s: float
    started: float = field(default_factory=time.monotonic)
    phase: str | None = None

    @property
    def ends_at(self) -> float:
        """The deadline on the time.monotonic clock."""
        return self.started + self.budget_s

    def left(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.ends_at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.ends_at

    def spend(self, phase: str) -> float:
        """Enter `phase` (it spends from now on) and return the seconds left to it."""
        self.phase = phase
        return self.left()

    def on_perf_counter(self) -> float:
        """The deadline on the time.perf_counter clock, for code timed with it."""
        return time.perf_counter() + self.ends_at - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started
