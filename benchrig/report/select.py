"""Which results a summary, comparison or report is over (`--model --suite --label --since
--driver`), the settings that tell two rows of one model apart, and the tasks whose file
changed between results."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchrig.attempts import unit
from benchrig.core.errors import UsageError
from benchrig.resultio.record import Record, as_records

# The settings that change an outcome: results that differ in one are never one row.
OUTCOME_SETTINGS = ("temperature", "max_tokens", "think", "context_size")
SettingsKey = tuple[Any, ...]
_ASKED = tuple((f"{name}_requested", name) for name in OUTCOME_SETTINGS)


def parse_since(text: str) -> dt.datetime:
    """`2026-11-30` or `2026-11-30T17:00[:00][Z|+01:00]`; a time without a zone is UTC."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r} is not a date (2026-11-30) or a date and time "
                         "(2026-11-30T17:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _started(result: Record) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(result.started_at)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Filters:
    """Each given field keeps only the results that match one of its values."""

    models: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    drivers: tuple[str, ...] = ()  # the driver, or the agent slot it filled
    since: dt.datetime | None = None

    def keeps(self, result: Record) -> bool:
        if self.models and result.model not in self.models:
            return False
        if self.suites and result.suite not in self.suites:
            return False
        if self.labels and result.label not in self.labels:
            return False
        if self.drivers and result.driver not in self.drivers and \
                result.agent not in self.drivers:
            return False
        if self.since is not None:
            started = _started(result)
            return started is not None and started >= self.since
        return True


def selected(results: Sequence[Mapping[str, Any]], filters: Filters) -> list[Record]:
    """The results `filters` keeps, as records (record.as_records)."""
    records = as_records(results)
    if filters == Filters():
        return records
    return [r for r in records if filters.keeps(r)]


def settings_key(result: Record) -> SettingsKey:
    """What a row is keyed on beside model and agent: the outcome-changing settings and the
    `--label` (results written before labels existed have none). The settings asked for
    (`<name>_requested`), not those a runtime confirmed: an attempt that failed before
    anything was sent confirms none, and still belongs to its experiment's row."""
    settings = result.settings
    return (*(settings[asked] if asked in settings else settings.get(name)
              for asked, name in _ASKED), result.label)


def settings_keys(results: Sequence[Record]) -> list[SettingsKey]:
    """Each result's row key (`settings_key`) keeping, of the outcome settings, only those
    that take more than one value for one task of one model and agent: a value a task or a
    suite sets for itself (a speed task's max tokens, a suite's think default) differs
    between tasks and tells no experiment apart; temperature 0 and 0.7 on the same task do.
    The label always counts."""
    made: dict[tuple[int, str | None], SettingsKey] = {}  # one key per shared settings
    keys = []
    for r in results:  # the records live through the call: an id is not reused meanwhile
        found = made.get(mine := (id(r.settings), r.label))
        if found is None:
            found = made[mine] = settings_key(r)
        keys.append(found)
    count = len(OUTCOME_SETTINGS)
    first: dict[tuple[Any, Any, Any], SettingsKey] = {}  # per task: the first key seen
    varying: dict[tuple[Any, Any], set[int]] = {}
    for result, key in zip(results, keys, strict=True):
        seen = first.setdefault((result.model, result.agent, result.task), key)
        if seen is not key and seen[:count] != key[:count]:
            varying.setdefault((result.model, result.agent), set()).update(
                i for i in range(count) if seen[i] != key[i])
    unset = (None,) * count
    shown: dict[tuple[int, int], SettingsKey] = {}  # equal rows share their key too

    def row(r: Record, key: SettingsKey) -> SettingsKey:
        counted = varying.get((r.model, r.agent))
        found = shown.get(mine := (id(key), id(counted)))  # both live through the call
        if found is None:
            found = shown[mine] = \
                (*(key[i] if i in counted else None for i in range(count)), key[-1]) \
                if counted else (*unset, key[-1])
        return found

    return [row(r, key) for r, key in zip(results, keys, strict=True)]


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def variant_names(keys: Iterable[SettingsKey]) -> dict[SettingsKey, str]:
    """Each key → the settings that set it apart from the others of its model and agent
    (`temperature 0.7 · label nightly`); "" when it is the only one."""
    keys = list(dict.fromkeys(keys))
    if len(keys) < 2:
        return dict.fromkeys(keys, "")
    names = (*OUTCOME_SETTINGS, "label")
    differing = [i for i in range(len(names)) if len({k[i] for k in keys}) > 1]
    return {key: " · ".join(f"{names[i]} {_shown(key[i])}" for i in differing)
            for key in keys}


def changed_tasks(results: Iterable[Record]) -> dict[str, int]:
    """Task (a dataset task's sample: `task#id`) → how many versions of its file and row
    (`task_hash`) the results hold, for each with more than one: their results are pooled in
    a row, so the reader is told."""
    hashes: dict[str, set[str]] = {}
    for result in results:
        hashes.setdefault(unit(result), set()).add(result.task_hash)
    return {task: len(found) for task, found in sorted(hashes.items()) if len(found) > 1}
