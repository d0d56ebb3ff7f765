"""Results → one group per (model, agent), less the errors a retry replaced: the one grouping
the per-model table, the scorecards and the task rows are all read from."""

from __future__ import annotations

from dataclasses import dataclass

from benchrig.attempts import Result, without_retried_errors


@dataclass(frozen=True)
class Group:
    """The results of one model as driven by one agent or runtime."""

    model: str  # as in the results; a renderer shows it through textsafe.label
    agent: str
    results: list[Result]


def grouped(results: list[Result]) -> list[Group]:
    """One group per (model, agent), sorted by model then agent; an error that a later
    result of the same attempt replaced (`--retry-errors`) is left out."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for result in without_retried_errors(results):
        groups.setdefault((result["model"], result["agent"]), []).append(result)
    return [Group(model, agent, group) for (model, agent), group in sorted(groups.items())]
