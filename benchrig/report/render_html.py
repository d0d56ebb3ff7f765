"""`benchrig report --html`: one self-contained HTML file (inline CSS, one small inline
script, static SVG charts; nothing from the network) with the scorecards, pass rates per
suite with their intervals, TTFT and decode speed, a task × model heat map and a drill-down
to every attempt.

Every text from a result goes through textsafe and Jinja2's autoescaping, and a
Content-Security-Policy lets only this module's own style and script (by their hashes)
run: an answer holding `<script>` is shown, never executed."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from dataclasses import dataclass
from html import escape  # stdlib: twice markupsafe's speed on short texts
from importlib import resources
from typing import Any

from markupsafe import Markup

from benchrig.core.errors import counts_against_model
from benchrig.report.build import Report
from benchrig.report.by_task import Cell, task_table
from benchrig.report.grouping import Group
from benchrig.report.phrases import COMPOSITE_FORMULA, ERRORS_NOTE
from benchrig.report.render_json import UNRATED, task_counts
from benchrig.report.select import changed_tasks
from benchrig.report.stats import Estimate, pass_rate
from benchrig.suites import SUITES
from benchrig.textsafe import label, printable, printable_lines

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
EXCERPT = 1200  # characters of an answer shown in a drill-down
MESSAGE = 300  # characters of a check's message
CHART_WIDTH = 360  # pixels of the longest bar
ROW = 16  # pixels per bar

Json = dict[str, Any]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _interval(found: Estimate | None) -> str:
    if found is None or found.low is None or found.high is None:
        return ""
    return f"[{found.low * 100:.1f}–{found.high * 100:.1f}]"


@dataclass(frozen=True)
class Bar:
    """One bar of a chart, in pixels, with its label and the figure it shows."""

    y: int
    width: float
    label: str
    text: str
    colour: str
    low: float | None = None  # the interval's ends, in pixels
    high: float | None = None


def _by_suite(group: Group) -> dict[str, Estimate | None]:
    """A group's pass rate in each of its suites (keyed as the results name them); none for
    the speed suite, which measures and has no verdicts to rate."""
    per_suite: dict[str, list[Json]] = {}
    for r in group.results:
        per_suite.setdefault(r["suite"], []).append(r)
    return {suite: None if suite == UNRATED else pass_rate(task_counts(results))
            for suite, results in per_suite.items()}


def _rate_bars(rates: list[dict[str, Estimate | None]], names: list[str]
               ) -> list[tuple[str, list[Bar]]]:
    """Per suite with a verdict, one bar per model row: its pass rate and interval."""
    charts = []
    for suite in SUITES:
        bars: list[Bar] = []
        for index, by_suite in enumerate(rates):
            found = by_suite.get(suite)
            if found is None:
                continue
            low = None if found.low is None else found.low * CHART_WIDTH
            high = None if found.high is None else found.high * CHART_WIDTH
            bars.append(Bar(len(bars) * ROW, found.value * CHART_WIDTH, names[index],
                            f"{_pct(found.value)} {_interval(found)}",
                            PALETTE[index % len(PALETTE)], low, high))
        if bars:
            charts.append((label(suite), bars))
    return charts


def _figure_bars(values: list[float | None], names: list[str], unit: str, digits: int
                 ) -> list[Bar]:
    top = max((v for v in values if v is not None), default=0.0) or 1.0
    return [Bar(i * ROW, (v or 0.0) / top * CHART_WIDTH, names[i],
                "—" if v is None else f"{v:.{digits}f} {unit}", PALETTE[i % len(PALETTE)])
            for i, v in enumerate(values)]


def _heat(cell: Cell | None) -> str:
    """The heat map's class of a cell: h0 (none passed) … h10 (all), hn (not run)."""
    if cell is None or cell.rate is None:
        return "hn"
    return f"h{round(cell.rate * 10)}"


def _checks(result: Json) -> str:
    details = result["checks"].get("details", [])
    if not details:
        return ""
    rows = "".join(
        f"<tr><td>{escape(label(d.get('name', '')))}</td>"
        f"{'<td class=pass>yes</td>' if d.get('passed') else '<td class=fail>no</td>'}"
        f"<td>{escape(printable(str(d.get('message', '')), MESSAGE))}</td></tr>"
        for d in details)
    return f"<table><tr><th>check</th><th>passed</th><th>message</th></tr>{rows}</table>"


def _figure(value: Any, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def _why(reasons: dict[str, Any], name: str) -> str:
    return escape(printable(str(reasons[name]), MESSAGE))


def _figures(metrics: Json) -> str:
    """TTFT and decode rate as the summary counts them (`grouping` made them credible): a
    figure refused as impossible, by the driver or by the report, says so and why."""
    reasons = metrics.get("rejected")
    reasons = reasons if isinstance(reasons, dict) else {}
    shown = []
    for name, title, fmt, unit in (("ttft_ms", "TTFT", ".0f", " ms"),
                                   ("tokens_per_s", "decode", ".1f", " t/s")):
        if name in reasons:
            shown.append(f'{title} <span class="rejected" title="{_why(reasons, name)}">'
                         "rejected</span>")
        else:
            shown.append(f"{title} {_figure(metrics.get(name), fmt)}{unit}")
    if reasons:  # a result file could list thousands: the first few say enough
        listed = "; ".join(f"{escape(label(name))}: {_why(reasons, name)}"
                           for name in list(reasons)[:8])
        more = f"; {len(reasons) - 8} more" if len(reasons) > 8 else ""
        shown.append(f"rejected as impossible, not counted: {listed}{more}")
    return " · ".join(shown)


def _attempt(result: Json) -> Markup:
    """One attempt's drill-down, written here rather than in the template: ten thousand of
    them are most of a report's time, and this is a fifth of the template's. Every text from
    the result is escaped (`html.escape`, quotes too) after textsafe made it printable; the
    verdict and the figures are schema-checked values."""
    error = result["error"] if isinstance(result.get("error"), dict) else None
    metrics, checks = result["metrics"], result["checks"]
    verdict = escape(result["result"])
    head = [f"run {escape(str(result.get('run_index', '—')))}",
            f'<span class="{verdict}">{verdict}</span>']
    if checks["total"]:
        head.append(f"{checks['passed']}/{checks['total']} checks")
    if result["truncated"]:
        head.append("⚠ truncated")
    head.append(escape(label(result["started_at"])))
    parts = [f'<details class="attempt" data-verdict="{verdict}"><summary>'
             f"{' · '.join(head)}</summary><p>{escape(printable(str(result['notes'])))}</p>"]
    if error is not None:
        counted = "" if counts_against_model(result) else " (not counted against the model)"
        text = printable(f"{error.get('kind')}: {error.get('message', '')}")
        parts.append(f'<p class="error">error {escape(text)}{counted}</p>')
    parts.append(_checks(result))
    parts.append(
        f'<p class="meta">{_figures(metrics)} · task '
        f'{escape(label(result["task_hash"])[:19])}… · transcript '
        f'{escape(label(result.get("transcript_file") or "—"))}</p>'
        f'<pre class="excerpt">'
        f'{escape(printable_lines(str(result.get("answer_excerpt") or ""), EXCERPT))}'
        "</pre></details>")
    return Markup("".join(parts))


def _drilldown(group: Group) -> list[Json]:
    per_task: dict[tuple[str, str], list[Json]] = {}
    for r in group.results:
        per_task.setdefault((r["suite"], r["task"]), []).append(r)
    order = {name: i for i, name in enumerate(SUITES)}
    tasks = []
    for key in sorted(per_task, key=lambda k: (order.get(k[0], 99), k)):
        attempts = sorted(per_task[key], key=lambda r: (r.get("run_index") or 0,
                                                        r["started_at"]))
        scored = [r for r in attempts if counts_against_model(r)]
        tasks.append({"suite": label(key[0]), "task": label(key[1]), "key": key,
                      "passed": sum(r["result"] == "pass" for r in scored),
                      "scored": len(scored), "attempts": [_attempt(r) for r in attempts]})
    return tasks


def _context_chart(groups: list[Group]) -> Json | None:
    """The context suite's TTFT against its prompt size, one dot per attempt (None when no
    context result has both)."""
    points = [(i, r["metrics"].get("input_tokens"), r["metrics"].get("ttft_ms"))
              for i, g in enumerate(groups) for r in g.results if r["suite"] == "context"]
    points = [(i, x, y) for i, x, y in points if x and y]
    if not points:
        return None
    top_x = max(x for _, x, _ in points)
    top_y = max(y for _, _, y in points)
    return {"top_x": top_x, "top_y": f"{top_y:.0f}", "points": [
        {"x": 40 + x / top_x * CHART_WIDTH, "y": 190 - y / top_y * 170,
         "colour": PALETTE[i % len(PALETTE)], "title": f"{x} tokens, {y:.0f} ms"}
        for i, x, y in points]}


def context(report: Report, filters: str = "") -> Json:
    """Everything the template shows, computed and made safe here."""
    groups = report.groups
    names = [label(f"{g.name} · {g.agent}") for g in groups]
    table = task_table(groups)
    index = {key: i for i, key in enumerate(table.tasks)}
    everything = [r for g in groups for r in g.results]
    cards: list[Json] = []
    rates = [_by_suite(group) for group in groups]
    for i, (group, row, card) in enumerate(zip(groups, report.rows, report.cards,
                                               strict=True)):
        overall = pass_rate(task_counts(group.results))
        suites = []
        shown = {label(suite): found for suite, found in rates[i].items()}
        for suite, s in card.suites.items():  # a card keys its suites by printable name
            found = shown.get(suite)
            suites.append({"suite": suite, "rate": _pct(found.value if found else None),
                           "interval": _interval(found), "passed": s.passed,
                           "scored": s.scored, "errors": s.errors,
                           "n": found.n if found else 0,
                           "method": found.method if found else ""})
        cards.append({"id": f"g{i}", "name": names[i], "colour": PALETTE[i % len(PALETTE)],
                      "composite": _pct(card.composite), "rate": _pct(row.pass_rate),
                      "interval": _interval(overall), "passed": row.passed,
                      "scored": row.scored, "errors": row.uncounted_errors,
                      "attempts": row.runs,
                      "ttft": "—" if row.ttft_ms is None else f"{row.ttft_ms:.0f} ms",
                      "decode": "—" if row.tokens_per_s is None
                      else f"{row.tokens_per_s:.1f} t/s",
                      "suites": suites, "tasks": _drilldown(group)})
    for made in cards:
        for task in made["tasks"]:
            task["id"] = f"{made['id']}-t{index[task.pop('key')]}"
    rate_charts = _rate_bars(rates, names)
    changed = changed_tasks(everything)
    return {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "results": len(everything), "filters": printable(filters), "cards": cards,
        "rate_charts": rate_charts,
        "ttft_bars": _figure_bars([r.ttft_ms for r in report.rows], names, "ms", 0),
        "decode_bars": _figure_bars([r.tokens_per_s for r in report.rows], names, "t/s", 1),
        "context_chart": _context_chart(groups),
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
        "width": CHART_WIDTH, "row": ROW,
    }


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_html(report: Report, filters: str = "") -> str:
    """The whole page: the template filled with `context`, its own style and script
    allowed by hash in the Content-Security-Policy, nothing else."""
    import jinja2

    folder = resources.files("benchrig.report") / "templates"
    style = (folder / "report.css").read_text(encoding="utf-8")
    script = (folder / "report.js").read_text(encoding="utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True)
    template = environment.from_string((folder / "report.html.j2").read_text(encoding="utf-8"))
    policy = (f"default-src 'none'; style-src {_hash(style)}; script-src {_hash(script)}; "
              "img-src 'none'; base-uri 'none'; form-action 'none'")
    return template.render(**context(report, filters), style=style, script=script,
                           policy=policy)
