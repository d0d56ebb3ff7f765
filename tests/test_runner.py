"""One attempt: settings, and what an attempt that ends in error records."""

from __future__ import annotations

from pathlib import Path

from benchrig.drivers.base import DriverOutput, DriverRequest
from benchrig.errors import DriverError
from benchrig.result import load_results
from benchrig.runner import Overrides, run_attempt, settings_for
from benchrig.scorecard import scorecards
from benchrig.spec import load_task
from tests.conftest import TASKS


class BrokenRuntime:
    """A driver whose server is down: the contract says it raises DriverError."""

    name = "broken"
    kind = "runtime"

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> DriverOutput:
        raise DriverError("infra", "connection refused")


def test_an_attempt_in_error_fails_every_assertion_of_its_task(tmp_path: Path) -> None:
    task = load_task(TASKS / "valid-brackets.md")
    attempt = run_attempt(task, "m", BrokenRuntime(), None, settings_for(task, Overrides()),
                          tmp_path)
    result = attempt.result
    assert result["result"] == "error" and result["error"]["kind"] == "infra"
    assert result["checks"]["total"] == 6 and result["checks"]["passed"] == 0
    assert all("ended in infra error" in d["message"] for d in result["checks"]["details"])
    # so the assertion rate (and the composite) cannot rise by erring
    (card,) = scorecards(load_results([tmp_path]).results)
    coding = card.suites["coding"]
    assert coding.checks_passed == 0 and coding.checks_total == 6
