"""Which attempts of a plan already have a result (`benchrig run --resume`): the same task
hash, model, driver, provider, asked settings, label and run index."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from benchrig.core.settings import Settings
from benchrig.execute.base import AttemptSpec

# The asked settings that make two attempts the same experiment (not jobs nor in_flight:
# concurrency is recorded, not a reason to run again).
ASKED = ("temperature", "max_tokens", "context_size", "think", "seed", "threads")
Identity = tuple[Any, ...]


def spec_identity(spec: AttemptSpec) -> Identity:
    return _identity(spec.task.task_hash, spec.model, spec.driver, spec.provider,
                     spec.settings, spec.run_index, spec.label)


def _identity(task_hash: str, model: str, driver: str, provider: str | None,
              settings: Settings, run_index: int, label: str | None) -> Identity:
    asked = tuple(getattr(settings, name) for name in ASKED)
    return (task_hash, model, driver, provider, *asked, settings.timeout_s, run_index, label)


def result_identity(result: dict[str, Any]) -> Identity | None:
    """The identity of the attempt a result records; None when it cannot be known (a result
    written before run indexes or asked settings were recorded), so it is never skipped on."""
    run, settings = result.get("run_index"), result.get("settings") or {}
    if not isinstance(run, int) or any(f"{name}_requested" not in settings for name in ASKED):
        return None
    asked = tuple(settings[f"{name}_requested"] for name in ASKED)
    return (result["task_hash"], result["model"], result["driver"], result["provider"],
            *asked, settings.get("timeout_s"), run, result.get("label"))


def latest(results: Iterable[dict[str, Any]]) -> dict[Identity, dict[str, Any]]:
    """Each known attempt's latest result (by start time)."""
    found: dict[Identity, dict[str, Any]] = {}
    for result in results:
        key = result_identity(result)
        if key is not None and (key not in found or
                                result["started_at"] > found[key]["started_at"]):
            found[key] = result
    return found


def remaining(plan: Sequence[AttemptSpec], results: Iterable[dict[str, Any]],
              retry_errors: bool = False) -> list[AttemptSpec]:
    """The attempts of `plan` with no result yet (and, with `retry_errors`, those whose latest
    result is an error), renumbered in plan order; each keeps its run index."""
    have = latest(results)
    left = [spec for spec in plan
            if (found := have.get(spec_identity(spec))) is None
            or (retry_errors and found["result"] == "error")]
    return [dataclasses.replace(spec, index=index) for index, spec in enumerate(left)]
