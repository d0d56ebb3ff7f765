"""Which attempt each result is (task, model, agent, provider, run): the run order of the
scorecards, the errors a retry replaced, and what `benchrig run --retry-errors` runs again."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

Result = Mapping[str, Any]
R = TypeVar("R", bound=Mapping[str, Any])  # a result file's dict, or a record.Record
AttemptKey = tuple[str, str, str, str | None, int]  # unit, model, agent, provider, run index
SAMPLE_MARK = "#"  # between a dataset task's id and its sample's id in a unit


def unit_of(task: str, sample_id: str | None) -> str:
    """What is scored once per run: a task, or one sample of a dataset task (`task#id`)."""
    return task if sample_id is None else f"{task}{SAMPLE_MARK}{sample_id}"


def unit(result: Mapping[str, Any]) -> str:
    """A result's unit (unit_of): every grouping by problem (attempts, runs, pass@k, pairs,
    intervals) keys on it, so the samples of one task are never pooled as one problem."""
    sample = result.get("sample_id")
    return unit_of(str(result["task"]), sample if isinstance(sample, str) else None)


def _start(result: Result) -> tuple[str, str]:
    return result["started_at"], result["run_id"]


def _numbered(result: Result) -> int | None:
    run = result.get("run_index")
    return run if isinstance(run, int) and not isinstance(run, bool) else None


def by_attempt(results: Iterable[R]) -> dict[AttemptKey, list[R]]:
    """Every result of every attempt, oldest first. A result's run is its `run_index`; one
    without (written before it existed) is run 0…k−1 by start time among the results of its
    task, model, agent and provider that have none."""
    unnumbered: dict[tuple[str, str, str, str | None], list[R]] = {}
    attempts: dict[AttemptKey, list[R]] = {}
    for result in results:
        who = (unit(result), result["model"], result["agent"], result["provider"])
        run = _numbered(result)
        if run is None:
            unnumbered.setdefault(who, []).append(result)
        else:
            attempts.setdefault((*who, run), []).append(result)
    for who, group in unnumbered.items():
        for run, result in enumerate(sorted(group, key=_start)):
            attempts.setdefault((*who, run), []).append(result)
    return {key: sorted(group, key=_start) for key, group in attempts.items()}


def without_retried_errors(results: list[R]) -> list[R]:
    """The results less each error that a later result of the same attempt replaced (what
    `--retry-errors` does): an error that was retried is not an error still standing."""
    replaced = {id(r) for group in by_attempt(results).values() for r in group[:-1]
                if r["result"] == "error"}
    return [r for r in results if id(r) not in replaced] if replaced else results


def run_order(results: list[R]) -> list[R]:
    """One task's results in the order of their runs: by run index (a result without one
    takes its place by start time), then by start time, so separate `--runs 1` commands
    are runs 0, 1, … and a retried attempt stays in its own run."""
    slots = {id(r): key[-1] for key, group in by_attempt(results).items() for r in group}
    return sorted(results, key=lambda r: (slots[id(r)], *_start(r)))


def errored(results: Iterable[Result], tasks: set[str], models: set[str], agent: str,
            provider: str | None) -> list[tuple[str, str, int]]:
    """(unit, model, run) of the attempts of these tasks and models, run by `agent` with
    `provider`, whose latest result is an error, in a stable order (model, unit, run)."""
    mine = [r for r in results if r["task"] in tasks and r["model"] in models
            and r["agent"] == agent and r["provider"] == provider]
    return sorted(((task, model, run) for (task, model, _, _, run), group
                   in by_attempt(mine).items() if group[-1]["result"] == "error"),
                  key=lambda k: (k[1], k[0], k[2]))
