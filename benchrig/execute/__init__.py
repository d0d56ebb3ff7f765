"""Running a plan of attempts: the Executor interface, the unit of work, the local executor.

Public face for the CLI and for a new executor (e.g. a distributed one): see `base.py`.
"""

from __future__ import annotations

from benchrig.execute.base import AttemptSpec, Done, Executor, Slot, Work
from benchrig.execute.local import LocalExecutor

__all__ = ["AttemptSpec", "Done", "Executor", "LocalExecutor", "Slot", "Work"]
