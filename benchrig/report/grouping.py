"""Results → one group per (model, agent), less the errors a retry replaced: the one grouping
the per-model table, the scorecards and the task rows are all read from."""

from __future__ import annotations

from dataclasses import dataclass

from benchrig.attempts import Result, without_retried_errors
from benchrig.plausible import credible


@dataclass(frozen=True)
class Group:
    """The results of one model as driven by one agent or runtime."""

    model: str  # as in the results; a renderer shows it through textsafe.label
    agent: str
    results: list[Result]


def grouped(results: list[Result]) -> list[Group]:
    """One group per (model, agent), sorted by model then agent; an error that a later
    result of the same attempt replaced (`--retry-errors`) is left out. Each result's
    `metrics` are its credible ones (plausible.credible)."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for result in without_retried_errors(results):
        # the figures' plausibility is judged here, once per result, not at every mean
        checked = {**result, "metrics": credible(result["metrics"])}
        groups.setdefault((result["model"], result["agent"]), []).append(checked)
    return [Group(model, agent, group) for (model, agent), group in sorted(groups.items())]
