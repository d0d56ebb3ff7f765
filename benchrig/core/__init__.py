"""The plain data every stage shares (task, messages, settings, metrics, transcript, verdict,
errors, the Check type); it imports nothing of BenchRig but the leaf text utilities.

Public: with `benchrig.drivers.base` (the Driver contract), `benchrig.metrics` (`measured`,
`StreamCollector`) and the `benchrig.drivers` / `benchrig.checks` lookups, this is what a
plugin imports (docs/writing-a-driver.md, docs/writing-a-check.md)."""

from benchrig.core.check import Check, CheckContext, Judge, Validator, check
from benchrig.core.deadline import Deadline
from benchrig.core.errors import BenchRigError, DriverError, TaskError, UsageError
from benchrig.core.measurements import Metrics
from benchrig.core.messages import Message
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec, TaskView
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.core.verdict import CheckDetail, Verdict, failed_details

__all__ = ["BenchRigError", "Check", "CheckContext", "CheckDetail", "Deadline", "DriverError",
           "DriverOutput", "Judge", "Message", "Metrics", "Settings", "TaskError", "TaskSpec",
           "TaskView", "Transcript", "UsageError", "Validator", "Verdict", "check",
           "failed_details"]
