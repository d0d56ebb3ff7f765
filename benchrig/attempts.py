"""Which attempt each result is (task, model, run), and which attempts' latest result is an
error: what `benchrig run --retry-errors` runs again."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Result = dict[str, Any]
AttemptKey = tuple[str, str, int]  # task id, model, run index


def _start(result: Result) -> tuple[str, str]:
    return result["started_at"], result["run_id"]


def latest_by_attempt(results: Iterable[Result]) -> dict[AttemptKey, Result]:
    """The latest result of every attempt. A result's run is its `run_index`; one without
    (written before it existed) is run 0…k−1 by start time among its task's and model's
    results without one, as the scorecards number runs."""
    unnumbered: dict[tuple[str, str], list[Result]] = {}
    latest: dict[AttemptKey, Result] = {}

    def keep(key: AttemptKey, result: Result) -> None:
        if key not in latest or _start(result) > _start(latest[key]):
            latest[key] = result

    for result in results:
        run = result.get("run_index")
        if isinstance(run, int):
            keep((result["task"], result["model"], run), result)
        else:
            unnumbered.setdefault((result["task"], result["model"]), []).append(result)
    for (task, model), group in unnumbered.items():
        for run, result in enumerate(sorted(group, key=_start)):
            keep((task, model, run), result)
    return latest


def errored(results: Iterable[Result], tasks: set[str], models: set[str], agent: str,
            provider: str | None) -> list[AttemptKey]:
    """The attempts of these tasks and models, run by `agent` with `provider`, whose latest
    result is an error, in a stable order (model, task, run)."""
    mine = [r for r in results if r["task"] in tasks and r["model"] in models
            and r["agent"] == agent and r["provider"] == provider]
    return sorted((key for key, r in latest_by_attempt(mine).items() if r["result"] == "error"),
                  key=lambda k: (k[1], k[0], k[2]))
