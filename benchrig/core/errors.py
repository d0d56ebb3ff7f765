"""BenchRig's error tree: what is a user's mistake and what becomes a result.

    BenchRigError
    ├── UsageError        bad command-line input (exit 2)
    ├── TaskError         a malformed task file: names the file and the field (exit 2)
    ├── ResultError       a result that does not match schema/result.schema.json
    ├── DriverError       the model or agent could not be run; becomes `result: error`
    │                     with `error.kind` infra | timeout | harness | model (ERROR_KINDS)
    └── SandboxError      the sandbox itself failed (could not start or clean up): the
                          runner records `result: error`, kind harness — never a verdict

A failing task is a result, not an exception: only DriverError crosses from a driver
into the runner, and the runner turns it into a result file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from benchrig.textsafe import stored

if TYPE_CHECKING:
    from benchrig.core.transcript import DriverOutput

MESSAGE_CAP = 20_000  # characters of a DriverError's message kept in the result

ErrorKind = Literal["infra", "harness", "timeout", "model"]
# Whose doing each kind is. The model's (True) counts as a failed attempt: a timeout, or an
# agent that failed after running tools the model chose (`model`: the model could have
# caused it). The rest (the server, the network, a missing binary or key, BenchRig itself)
# never reached a verdict and is counted beside the pass rate, never in it. An answer with
# no code, a truncated answer or an agent that stopped at its turn or budget limit is not
# an error: it is checked, and fails.
ERROR_KINDS: dict[ErrorKind, bool] = {"timeout": True, "model": True, "infra": False,
                                      "harness": False}


def counts_against_model(result: Mapping[str, Any]) -> bool:
    """Whether a result is in the model's pass rate: a verdict (pass or fail), or an error
    of the model's own doing (ERROR_KINDS). `no-test` and other errors are not."""
    if result["result"] in ("pass", "fail"):
        return True
    error = result.get("error") if result["result"] == "error" else None
    if not isinstance(error, Mapping):
        return False
    kind: Any = error.get("kind")
    return ERROR_KINDS.get(kind, False)


class BenchRigError(Exception):
    """Base of every error BenchRig raises on purpose."""


class UsageError(BenchRigError):
    """The command line asks for something that cannot be done."""


class TaskError(BenchRigError):
    """A task file is malformed; the message is `file: field: what is wrong`."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class ResultError(BenchRigError):
    """A result does not validate against the published schema."""


class DriverError(BenchRigError):
    """A driver could not produce an answer; the runner records it as `result: error`.

    `partial` is what was measured before it failed (metrics, agent version, raw events): it
    goes into the result and its sidecar, and is never checked. `phase` names the phase of
    the attempt that was running when it failed (for a timeout: the one that ran out).
    """

    def __init__(self, kind: ErrorKind, message: str, partial: DriverOutput | None = None,
                 phase: str | None = None) -> None:
        self.kind: ErrorKind = kind
        self.phase = phase
        # server bodies, agent and candidate text end up here: stored safely once
        self.message = stored(message, MESSAGE_CAP)
        self.partial = partial
        super().__init__(f"{kind}: {self.message}")


class SandboxError(BenchRigError):
    """The sandbox could not start or could not prove it cleaned up; not the candidate's fault."""
