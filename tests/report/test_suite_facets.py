"""A plugin suite's report figures are outside code and its values outside text: a number
that is not finite is n/a, a text is shown short and printable (and guarded in a CSV cell),
and a figure that raises or gives another type is a UsageError naming the suite."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from benchrig.core.errors import UsageError
from benchrig.report import facets, panel, render
from benchrig.suites.base import Figure, Suite, SuiteReport
from benchrig.suites.shapes import single_answer
from tests.helpers.result_sets import attempt

Compute = Callable[[Sequence[Mapping[str, Any]]], Any]


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Compute], None]]:
    """Registers, for the report only, a suite `odd` whose one figure `x` is `compute`."""

    def register(compute: Compute) -> None:
        odd = Suite("odd", single_answer,
                    report=SuiteReport(figures=(Figure("x", compute, "odd figure"),)))
        monkeypatch.setattr(facets, "find_suite", {"odd": odd}.get)
        facets.facet.cache_clear()
        panel.panel.cache_clear()

    yield register
    facets.facet.cache_clear()
    panel.panel.cache_clear()


RESULTS = [attempt("m", "t1", "pass", suite="odd"), attempt("m", "t2", "fail", suite="odd")]


def test_a_figure_is_computed_over_one_model_s_results(plugin: Callable[[Compute], None]
                                                       ) -> None:
    plugin(lambda results: sum(r["result"] == "pass" for r in results) / len(results))
    assert "odd figure 0.5 ·" in render(RESULTS, "table")
    (row,) = csv.DictReader(io.StringIO(render(RESULTS, "csv")))
    assert row["odd_x"] == "0.5000"
    (model,) = json.loads(render(RESULTS, "json"))["models"]
    assert model["suites"]["odd"]["figures"] == {"x": 0.5}


def test_a_hostile_text_figure_is_printable_and_never_a_formula(
        plugin: Callable[[Compute], None]) -> None:
    plugin(lambda results: "=HYPERLINK(\"http://x\")\x1b[2J" + "y" * 10_000)
    text = render(RESULTS, "table")
    assert "\x1b" not in text and "y" * 1000 not in text
    (row,) = csv.DictReader(io.StringIO(render(RESULTS, "csv")))
    assert row["odd_x"].startswith("'=HYPERLINK")
    assert "\x1b" not in row["odd_x"]


def test_a_figure_that_is_not_finite_is_n_a(plugin: Callable[[Compute], None]) -> None:
    plugin(lambda results: math.nan)
    assert "odd figure n/a" in render(RESULTS, "table")
    (model,) = json.loads(render(RESULTS, "json"))["models"]  # strict JSON: no NaN
    assert model["suites"]["odd"]["figures"] == {"x": None}


@pytest.mark.parametrize("compute", [lambda results: 1 / 0, lambda results: [1, 2],
                                     lambda results: True])
def test_a_broken_figure_is_the_suite_s_fault_named(plugin: Callable[[Compute], None],
                                                    compute: Compute) -> None:
    plugin(compute)
    with pytest.raises(UsageError, match=r"suite 'odd': figure 'x'"):
        render(RESULTS, "table")


def test_a_suite_nobody_registers_gets_the_plain_line() -> None:
    """A result naming a suite no package registers (uninstalled since) is still summarized."""
    results = [attempt("m", "t1", "pass", suite="gone")]
    assert "gone" in render(results, "table")
    (row,) = csv.DictReader(io.StringIO(render(results, "csv")))
    assert "gone_pass_rate" not in row  # columns are a registered suite's
