"""One attempt: settings, and what an attempt that ends in error records."""

from __future__ import annotations

from pathlib import Path

from benchrig.core.errors import DriverError, ErrorKind
from benchrig.core.transcript import DriverOutput
from benchrig.drivers.base import DriverRequest
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.report.grouping import grouped
from benchrig.report.scorecard import scorecards
from benchrig.resultio.files import load_results
from benchrig.spec import load_task
from tests.conftest import TASKS


class BrokenRuntime:
    """A driver whose server is down (or, `kind="timeout"`, too slow): it raises DriverError."""

    name = "broken"
    kind = "runtime"

    def __init__(self, error_kind: ErrorKind = "infra") -> None:
        self.error_kind: ErrorKind = error_kind

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> DriverOutput:
        raise DriverError(self.error_kind, "connection refused")


def test_an_infra_error_is_outside_the_assertion_rate(tmp_path: Path) -> None:
    task = load_task(TASKS / "valid-brackets.md")
    attempt = run_attempt(task, "m", BrokenRuntime(), None, settings_for(task, Overrides()),
                          tmp_path)
    result = attempt.result
    assert result["result"] == "error" and result["error"]["kind"] == "infra"
    assert result["checks"]["total"] == 0  # never checked, never in a rate
    (card,) = scorecards(grouped(load_results([tmp_path]).results))
    coding = card.suites["coding"]
    assert (coding.checks_total, coding.scored, coding.errors) == (0, 0, 1)
    assert card.composite is None


def test_a_timeout_fails_every_assertion_of_its_task(tmp_path: Path) -> None:
    task = load_task(TASKS / "valid-brackets.md")
    attempt = run_attempt(task, "m", BrokenRuntime("timeout"), None,
                          settings_for(task, Overrides()), tmp_path)
    result = attempt.result
    assert result["checks"]["total"] == 6 and result["checks"]["passed"] == 0
    assert all("ended in timeout error" in d["message"] for d in result["checks"]["details"])
    # so the assertion rate (and the composite) cannot rise by timing out
    (card,) = scorecards(grouped(load_results([tmp_path]).results))
    coding = card.suites["coding"]
    assert coding.checks_passed == 0 and coding.checks_total == 6 and card.composite == 0.0
