"""Results → everything a rendering shows, computed once: the groups, the per-model table's
rows and the scorecards, index for index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchrig.report.grouping import Group, grouped, levels_only
from benchrig.report.scorecard import ModelCard, scorecards
from benchrig.report.table import ModelRow, model_rows
from benchrig.resultio.record import Record, as_records


@dataclass(frozen=True)
class Report:
    """One (model, agent) per index: its results, its table row and its scorecard; apart,
    the load sweeps' levels (not attempts: their own section)."""

    groups: list[Group]
    rows: list[ModelRow]
    cards: list[ModelCard]
    levels: list[Record] = field(default_factory=list)


def build(results: Sequence[Mapping[str, Any]], packs: Mapping[str, str] | None = None
          ) -> Report:
    """`packs`: each imported pack's task id → its name (packs.scores.pack_tasks): those
    tasks are their pack's own scorecard line, out of their suite's and the composite."""
    records = as_records(results)
    groups = grouped(records)
    return Report(groups=groups, rows=model_rows(groups), cards=scorecards(groups, packs),
                  levels=levels_only(records))
