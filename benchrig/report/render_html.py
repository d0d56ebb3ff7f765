"""`benchrig report --html`: one self-contained HTML file (inline CSS, one small inline
script, static SVG charts; nothing from the network) with the scorecards, pass rates per
suite with their intervals, TTFT and decode speed, a task × model heat map, and the sample
browser's data (one JSON block) from which the page's script renders every drill-down.

Every text from a result goes through textsafe and Jinja2's autoescaping, and a
Content-Security-Policy lets only this module's own style and script (by their hashes)
run: an answer holding `<script>` is shown, never executed."""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
from collections.abc import Callable, Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

from benchrig.report.build import Report
from benchrig.report.by_task import Cell, TaskTable, task_table
from benchrig.report.chart import CHART_WIDTH, ROW, Bar, colour
from benchrig.report.disagreed import DISAGREE_NOTE
from benchrig.report.facets import facet, in_order, registered
from benchrig.report.grouping import Group
from benchrig.report.load_curves import html_curves
from benchrig.report.panel import Json, panel
from benchrig.report.phrases import COMPOSITE_FORMULA, ERRORS_NOTE
from benchrig.report.render_json import task_counts
from benchrig.report.scorecard import ModelCard
from benchrig.report.select import changed_tasks
from benchrig.report.stats import Estimate, pass_rate
from benchrig.report.viewer import Spool, island_parts, payload_parts, row_text
from benchrig.resultio.record import Record
from benchrig.textsafe import label, printable


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _interval(found: Estimate | None) -> str:
    if found is None or found.low is None or found.high is None:
        return ""
    return f"[{found.low * 100:.1f}–{found.high * 100:.1f}]"


def _by_suite(group: Group, card: ModelCard) -> dict[str, Estimate | None]:
    """A group's pass rate on each line of its scorecard (a suite, or an imported pack's
    own); none for the speed suite, which measures and has no verdicts to rate."""
    per_suite: dict[str, list[Record]] = {}
    for r in group.results:
        per_suite.setdefault(card.line(r), []).append(r)
    return {suite: pass_rate(task_counts(results)) if facet(suite).rated else None
            for suite, results in per_suite.items()}


def _rate_bars(rates: list[dict[str, Estimate | None]], names: list[str]
               ) -> list[tuple[str, list[Bar]]]:
    """Per suite with a verdict, one bar per model row: its pass rate and interval."""
    charts = []  # a registered suite's lines, by their order (a pack's is its own section)
    for suite in in_order({s for by_suite in rates for s in by_suite if registered(s)}):
        bars: list[Bar] = []
        for index, by_suite in enumerate(rates):
            found = by_suite.get(suite)
            if found is None:
                continue
            low = None if found.low is None else found.low * CHART_WIDTH
            high = None if found.high is None else found.high * CHART_WIDTH
            bars.append(Bar(len(bars) * ROW, found.value * CHART_WIDTH, names[index],
                            f"{_pct(found.value)} {_interval(found)}",
                            colour(index), low, high))
        if bars:
            charts.append((label(suite), bars))
    return charts


def _figure_bars(values: list[float | None], names: list[str], unit: str, digits: int
                 ) -> list[Bar]:
    top = max((v for v in values if v is not None), default=0.0) or 1.0
    return [Bar(i * ROW, (v or 0.0) / top * CHART_WIDTH, names[i],
                "—" if v is None else f"{v:.{digits}f} {unit}", colour(i))
            for i, v in enumerate(values)]


def _heat(cell: Cell | None) -> str:
    """The heat map's class of a cell: h0 (none passed) … h10 (all), hn (not run)."""
    if cell is None or cell.rate is None:
        return "hn"
    return f"h{round(cell.rate * 10)}"


def context(report: Report, filters: str = "", served: bool = False,
            packs: tuple[str, ...] = (),
            sidecar_of: Callable[[Record], Json | None] | None = None,
            data: str | None = None, spool: Spool | None = None,
            table: TaskTable | None = None) -> Json:
    """Everything the template shows, computed and made safe here (`served`: the page is
    `benchrig view`'s, which sends each attempt's details on demand; `packs`: each imported
    pack's own score line, pass@k over its problems, shown apart from the suites' rates;
    `data`: what stands for the sample browser's data, which `render_html_parts` writes
    in pieces; by default the data itself; `table`: the groups' task table where the caller
    made it already)."""
    groups = report.groups
    names = [label(f"{g.name} · {g.agent}") for g in groups]
    table = table if table is not None else task_table(groups)
    everything = [r for g in groups for r in g.results]
    cards: list[Json] = []
    rates = [_by_suite(group, card) for group, card in zip(groups, report.cards, strict=True)]
    for i, (group, row, card) in enumerate(zip(groups, report.rows, report.cards,
                                               strict=True)):
        overall = pass_rate(task_counts(group.results))
        suites = []
        shown = rates[i]  # keyed as the card keys its lines
        for suite, s in card.suites.items():  # a card keys its suites by printable name
            found = shown.get(suite)
            suites.append({"suite": suite, "rate": _pct(found.value if found else None),
                           "interval": _interval(found), "passed": s.passed,
                           "scored": s.scored, "errors": s.errors,
                           "n": found.n if found else 0,
                           "method": found.method if found else ""})
        cards.append({"id": f"g{i}", "name": names[i], "colour": colour(i),
                      "composite": _pct(card.composite), "rate": _pct(row.pass_rate),
                      "interval": _interval(overall), "passed": row.passed,
                      "scored": row.scored, "errors": row.uncounted_errors,
                      "attempts": row.runs,
                      "ttft": "—" if row.ttft_ms is None else f"{row.ttft_ms:.0f} ms",
                      "decode": "—" if row.tokens_per_s is None
                      else f"{row.tokens_per_s:.1f} t/s",
                      "disagreements": row.disagreements,
                      "suites": suites})
    rate_charts = _rate_bars(rates, names)
    changed = changed_tasks(everything)
    return {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "results": len(everything), "filters": printable(filters), "cards": cards,
        "rate_charts": rate_charts,
        "ttft_bars": _figure_bars([r.ttft_ms for r in report.rows], names, "ms", 0),
        "decode_bars": _figure_bars([r.tokens_per_s for r in report.rows], names, "t/s", 1),
        # the suites' own panels (panel.Panel.html): the context chart, the tool-use rates
        "context_chart": None, "tool_rates": [],
        **{key: value for name in in_order({r.suite for r in everything})
           for key, value in panel(name).html(groups).items()},
        "load_curves": html_curves(report.levels, CHART_WIDTH),  # not attempts: their own section
        "packs": [printable(line) for line in packs],
        # the heat map's links (#gN-tM) pin the sample browser to one row's task: the page's
        # script renders that drill-down from the data, none is written here twice
        "data": "" if served else data if data is not None else "".join(
            island_parts(_data(report, sidecar_of, spool, table))),
        "heat": {"columns": [{"name": n, "id": f"g{i}"} for i, n in enumerate(names)],
                 "rows": [{"suite": label(s), "task": label(t), "id": i,
                           "differs": table.differs((s, t)),
                           "cells": [None if c is None else {"text": c.text, "heat": _heat(c)}
                                     for c in table.cells[(s, t)]]}
                          for i, (s, t) in enumerate(table.tasks)]},
        "notes": [ERRORS_NOTE, COMPOSITE_FORMULA,
                  "intervals are 95 % and over tasks: Wilson score when each task has one "
                  "attempt, else cluster-robust normal (never narrower than Wilson over attempts)"],
        "changed": [f"{label(t)} ({n} versions)" for t, n in changed.items()],
        "width": CHART_WIDTH, "row": ROW, "served": served, "disagree_note": DISAGREE_NOTE,
    }


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@functools.cache  # compiled once per process (`benchrig view` re-renders): ~2 MB at its peak
def _page(name: str) -> tuple[jinja2.Template, str, str]:
    """A template, with the page's own style and script (report.js, then viewer.js)."""
    import jinja2  # here: a summary never pays for it

    folder = resources.files("benchrig.report") / "templates"
    style = (folder / "report.css").read_text(encoding="utf-8")
    script = "\n".join((folder / name).read_text(encoding="utf-8")
                       for name in ("report.js", "viewer.js"))
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True)
    return environment.from_string((folder / name).read_text(encoding="utf-8")), style, script


def _policy(style: str, script: str, served: bool, frames: bool = False) -> str:
    """Only the page's own style and script run (by hash); nothing from the network; a
    served page may fetch from its loopback server, and its shell frame the report part."""
    connect = "'self'" if served else "'none'"
    return (f"default-src 'none'; style-src {_hash(style)}; script-src {_hash(script)}; "
            "img-src 'none'; base-uri 'none'; form-action 'none'; "
            f"connect-src {connect}" + ("; frame-src 'self'" if frames else ""))


def _data(report: Report, sidecar_of: Callable[[Record], Json | None] | None,
          spool: Spool | None = None, table: TaskTable | None = None) -> dict[str, Any]:
    """The sample browser's data for a static page, its rows and details as iterators
    (the details' result parts from `spool` where it holds them: files read once)."""
    groups = report.groups
    table = table if table is not None else task_table(groups)
    # a sweep's levels are results too: listed after the attempts, in no model row
    rows: list[int | None] = [i for i, g in enumerate(groups) for _ in g.results]
    parts = payload_parts([r for g in groups for r in g.results] + report.levels, True,
                          sidecar_of, rows + [None] * len(report.levels), spool)
    return {**parts, "rows": map(row_text, parts["rows"]),  # encoded the fast way
            "served": False,
            "pins": {"groups": [label(f"{g.name} · {g.agent}") for g in groups],
                     "tasks": [[label(s), label(t)] for s, t in table.tasks]}}


# Stands for the data in the page until it is written: no text of the page's can hold it
# (outside text reaches the page escaped, and this has no character that escaping keeps).
_MARK = "\x00benchrig-data\x00"


def render_html_parts(report: Report, filters: str = "", served: bool = False,
                      packs: tuple[str, ...] = (),
                      sidecar_of: Callable[[Record], Json | None] | None = None,
                      spool: Spool | None = None) -> Iterator[str]:
    """`render_html`'s page in pieces, the sample browser's data an attempt at a time: a
    report over 100,000 results never holds its page (hundreds of MB) in memory."""
    template, style, script = _page("report.html.j2")
    table = task_table(report.groups)  # the heat map's and the browser's pins: made once
    page = template.render(**context(report, filters, served, packs, sidecar_of,
                                     data=_MARK, table=table),
                           style=style, script=script, policy=_policy(style, script, served))
    if served:
        yield page
        return
    head, tail = page.split(_MARK)
    yield head
    yield from island_parts(_data(report, sidecar_of, spool, table))
    yield tail


def render_html(report: Report, filters: str = "", served: bool = False,
                packs: tuple[str, ...] = (),
                sidecar_of: Callable[[Record], Json | None] | None = None) -> str:
    """The whole page: the template filled with `context`, its own style and script
    allowed by hash in the Content-Security-Policy, nothing else (`served`: the report
    part of `benchrig view`'s page, without the sample browser its shell holds)."""
    return "".join(render_html_parts(report, filters, served, packs, sidecar_of))


def render_shell(results: int) -> str:
    """`benchrig view`'s page as it is sent at once, before any result is read: the sample
    browser, which fetches its rows, and a frame for the report part (`render_html`,
    served). `results`: how many result files were found."""
    template, style, script = _page("shell.html.j2")
    return template.render(results=results, style=style, script=script,
                           policy=_policy(style, script, served=True, frames=True))
