"""Results → one group per (model, agent, outcome-changing settings), less the errors a retry
replaced: the one grouping the per-model table, the scorecards and the task rows are all
read from."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchrig.attempts import without_retried_errors
from benchrig.metrics import mean_known
from benchrig.plausible import Credible, credible
from benchrig.report.facets import facet
from benchrig.report.select import SettingsKey, settings_keys, variant_names
from benchrig.resultio.record import Record, as_records


@dataclass(frozen=True)
class Group:
    """The results of one model as driven by one agent or runtime, with one set of the
    settings that change an outcome (select.OUTCOME_SETTINGS, and the label)."""

    model: str  # as in the results; a renderer shows it through textsafe.label
    agent: str
    results: list[Record]
    variant: str = ""  # what sets it apart from the model's other rows; "" if it has none

    @property
    def name(self) -> str:
        """The model as its row is headed: with the settings that set it apart."""
        return f"{self.model} [{self.variant}]" if self.variant else self.model


def mean_figure(results: Iterable[Record], name: str) -> float | None:
    """metrics.mean_metric over the records' figures, one list and no generator: a record's
    metrics are credible already (record.from_json), and credible() returns them as they are
    (a record made otherwise is judged here all the same)."""
    return mean_known([m.get(name) if type(m := r.metrics) is Credible else credible(m).get(name)
                       for r in results])


def attempts_only(records: list[Record]) -> list[Record]:
    """The results that are attempts: a sweep's levels (SuiteReport.levels) are measured
    distributions with nothing to pass, shown in their own section, never counted here."""
    return [r for r in records if not facet(r.suite).levels]


def levels_only(records: list[Record]) -> list[Record]:
    """The results that are a sweep's levels (SuiteReport.levels): what attempts_only leaves."""
    return [r for r in records if facet(r.suite).levels]


def grouped(results: Sequence[Mapping[str, Any]]) -> list[Group]:
    """One group per (model, agent, settings), sorted by model, agent, then settings; an
    error that a later result of the same attempt replaced (`--retry-errors`) is left out.
    Each record's `metrics` are its credible ones already (record.from_json)."""
    groups: dict[tuple[str, str], dict[SettingsKey, list[Record]]] = {}
    kept = without_retried_errors(attempts_only(as_records(results)))
    for result, key in zip(kept, settings_keys(kept), strict=True):
        groups.setdefault((result.model, result.agent), {}).setdefault(key, []).append(result)
    found = []
    for (model, agent), variants in sorted(groups.items()):
        names = variant_names(variants)
        found += [Group(model, agent, variants[key], names[key])
                  for key in sorted(variants, key=lambda k: names[k])]
    return found
