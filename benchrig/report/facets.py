"""Each suite's report facet, asked of the suite by its name: the one way the report learns
what a suite's line shows (a suite nobody registers gets the plain pass-rate line)."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.report.cards import PLAIN, FigureValue, Shown
from benchrig.suites import find_suite
from benchrig.suites.base import SuiteReport
from benchrig.textsafe import label, printable, type_name


# Bounded: names come from result files (the schema keeps them short, `[a-z][a-z0-9_]*`).
@functools.lru_cache(maxsize=256)
def facet(name: str) -> SuiteReport:
    """The report facet of the suite registered as `name`; the plain one for any other line
    (an imported pack's, or a suite no installed package registers any more)."""
    found = find_suite(name)
    return PLAIN if found is None else found.report


def reads_whole_records(name: str) -> bool:
    """The suite registered as `name` adds figures of its own: they read whichever fields they
    like (the documented one reads `notes`), so its results are read whole — a lean record's
    left-out field (record.WHOLE_ONLY) would count as empty, not fail."""
    return bool(facet(name).figures)


def registered(name: str) -> bool:
    """`name` is a registered suite's (a line of its own columns), not a pack's or a stray."""
    return find_suite(name) is not None


def in_order(names: Iterable[str]) -> list[str]:
    """Suite names by their facets' order, then by name."""
    return sorted(names, key=lambda name: (facet(name).order, name))


def figure_values(name: str, results: Sequence[Any]) -> tuple[Shown, ...]:
    """Each figure the suite declares, over one model's results on it:
    a text made short and printable, a number finite or None. A figure that raises or
    returns another type is the installed suite's fault: a UsageError naming it."""
    shown: list[Shown] = []
    for figure in facet(name).figures:
        try:
            value = figure.compute(results)
        except Exception as exc:
            raise UsageError(f"suite {printable(name)!r}: figure {printable(figure.name)!r} "
                             f"failed: {type_name(exc)}: {printable(str(exc))}") from exc
        found: FigureValue = value
        if isinstance(value, str):
            found = label(value)
        elif isinstance(value, float) and not math.isfinite(value):
            found = None
        elif value is not None and (isinstance(value, bool)
                                    or not isinstance(value, int | float)):
            raise UsageError(f"suite {printable(name)!r}: figure {printable(figure.name)!r} "
                             f"gave a {label(type(value).__name__)}, not a number, a text "
                             "or None")
        shown.append(Shown(label(figure.name), label(figure.text or figure.name), found))
    return tuple(shown)
