"""A (model, agent) group → its row of the benchmark-runner's per-model table (the figures)."""

from __future__ import annotations

from dataclasses import dataclass

from benchrig.core.errors import counts_against_model
from benchrig.metrics import any_floored, caveat
from benchrig.report.crowding import crowded_ttft
from benchrig.report.disagreed import disagreeing
from benchrig.report.facets import facet
from benchrig.report.grouping import Group, mean_figure
from benchrig.report.panel import panel
from benchrig.resultio.record import Record
from benchrig.textsafe import label


@dataclass(frozen=True)
class ModelRow:
    """One line of the benchmark-runner's table: a model as driven by one agent or runtime."""

    model: str
    agent: str
    runs: int
    passed: int
    failed: int
    errors: int
    no_test: int
    tokens_per_s: float | None
    tokens_per_s_floored: bool
    ttft_ms: float | None
    wall_s: float | None
    cost_usd: float | None
    counted_errors: int = 0  # errors of the model's own doing (timeouts): in the rate
    # how many attempts' figures the mean takes as partial or lacks as rejected
    tokens_per_s_caveat: str = ""
    cost_caveat: str = ""
    by_window: bool = False  # context attempts counted one verdict per window
    ttft_in_flight: int = 0  # TTFTs in the mean measured with others in flight
    disagreements: int = 0  # attempts whose agent's own figures disagree with the gateway's

    @property
    def scored(self) -> int:
        """Attempts that reached a verdict: what the pass rate is over."""
        return self.passed + self.failed + self.counted_errors

    @property
    def uncounted_errors(self) -> int:
        """Errors that are not the model's doing: shown beside the rate, not in it."""
        return self.errors - self.counted_errors

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


def _verdicts(group: list[Record]) -> tuple[int, int]:
    """(passed, failed), each context attempt counted by window as the scorecard's
    context_retrieval_pct is (so the table and the card show one figure), the others by
    attempt; a counted error (timeout) is neither: ModelRow.scored adds it."""
    passed = failed = 0
    for r in group:
        units = panel(r.suite).units(r) if r.result in ("pass", "fail") else None
        if units is not None:  # its suite's units (panel.Panel.units): context's windows
            found, decided = units
            passed, failed = passed + found, failed + decided - found
        else:
            passed += r.result == "pass"
            failed += r.result == "fail"
    return passed, failed


def model_rows(groups: list[Group]) -> list[ModelRow]:
    """One row per (model, agent) group, in the groups' order."""
    rows = []
    for model, agent, group in ((g.name, g.agent, g.results) for g in groups):
        outcomes = [r.result for r in group]
        passed, failed = _verdicts(group)
        # tool conversations stay out of the legacy timing averages (SuiteReport.timed)
        timed = [r for r in group if facet(r.suite).timed]
        metrics = [r.metrics for r in timed]
        rows.append(ModelRow(
            model=label(model),
            agent=label(agent),
            runs=len(group),
            passed=passed,
            failed=failed,
            errors=outcomes.count("error"),
            no_test=outcomes.count("no-test"),
            counted_errors=sum(r.result == "error" and counts_against_model(r)
                               for r in group),
            tokens_per_s=mean_figure(timed, "tokens_per_s"),
            tokens_per_s_floored=any_floored(metrics),
            ttft_ms=mean_figure(timed, "ttft_ms"),
            wall_s=mean_figure(timed, "wall_s"),
            cost_usd=mean_figure(timed, "cost_usd"),
            tokens_per_s_caveat=caveat(metrics, "tokens_per_s"),
            cost_caveat=caveat(metrics, "cost_usd"),
            by_window=any(panel(r.suite).in_units for r in group),
            ttft_in_flight=crowded_ttft(timed),
            disagreements=disagreeing(group),
        ))
    return rows
