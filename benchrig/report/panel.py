"""Panel: what a suite shows in every view beyond the plain pass-rate line (the report side
of its facet, `SuiteReport.panel`); the base class is that plain line."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.core.plugins import load_target
from benchrig.report.cards import Span, SuiteCard
from benchrig.report.facets import facet
from benchrig.report.grouping import Group
from benchrig.resultio.record import Record
from benchrig.textsafe import printable

Json = dict[str, Any]
# A wide block of CSV columns over every model's card, and one card's cells of it.
Wide = tuple[list[str], Callable[[SuiteCard], Mapping[str, str]]]


# The cells every panel and the CSV write alike.
def number(value: float | None, digits: int = 4) -> str:
    """A figure as a CSV cell: empty when unknown."""
    return "" if value is None else f"{value:.{digits}f}"


def low(value: Span | None) -> float | None:
    return value.low if value else None


def high(value: Span | None) -> float | None:
    return value.high if value else None


def span_json(value: Span | None) -> Json | None:
    """A range over runs as the JSON summary gives it."""
    return None if value is None else {"low": value.low, "high": value.high, "runs": value.runs}


class Panel:
    """A suite's figures in every view; each method's default is the plain pass-rate line
    (None: the renderer's own generic rendering). `in_units`: `units` counts its attempts."""

    in_units = False

    def units(self, result: Record) -> tuple[int, int] | None:
        """(passed, decided) units one attempt counts as, when not one verdict (context: its
        windows); also its checks on the scorecard."""
        return None

    def extend(self, card: SuiteCard, results: list[Record]) -> SuiteCard:
        """The card with the suite's own figures from its results."""
        return card

    def detail(self, card: SuiteCard, with_rate: bool) -> str | None:
        """The text and Markdown detail of the suite's line."""
        return None

    def columns(self, name: str) -> list[str] | None:
        """The suite's own CSV columns (before the TTFT and truncation ones every suite has)."""
        return None

    def values(self, card: SuiteCard) -> list[str] | None:
        """One card's cells of `columns`."""
        return None

    def wide(self, cards: list[SuiteCard]) -> Wide:
        """Columns spanning every model's card (context: per window), and a card's cells."""
        return [], lambda card: {}

    def json(self, card: SuiteCard) -> Json:
        """Fields the suite adds to its entry of the JSON summary."""
        return {}

    def html(self, groups: list[Group]) -> Json:
        """The HTML page's panels of this suite, by the template's names."""
        return {}


PLAIN_PANEL = Panel()


@functools.lru_cache(maxsize=256)
def panel(name: str) -> Panel:
    """The suite's bespoke figures (facet.panel, imported now), or the plain panel."""
    target = facet(name).panel
    if target is None:
        return PLAIN_PANEL
    found = load_target("report panel of suite", name, target)
    if not isinstance(found, Panel):
        raise UsageError(f"suite {printable(name)!r}: {printable(target)} is not a report "
                         "panel (benchrig.report.panel.Panel)")
    return found
