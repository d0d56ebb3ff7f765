"""The CSV export: one row per model and agent, the per-model table's columns, then the
scorecard's."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from benchrig.core.errors import counts_against_model
from benchrig.report.build import Report
from benchrig.report.disagreed import disagreement
from benchrig.report.facets import facet, in_order, registered
from benchrig.report.panel import high as _high
from benchrig.report.panel import low as _low
from benchrig.report.panel import number as _number
from benchrig.report.panel import panel
from benchrig.report.scorecard import ModelCard, SuiteCard
from benchrig.report.table import ModelRow
from benchrig.resultio.record import Record
from benchrig.textsafe import PRINT_CAP, label, printable

# A spreadsheet runs a cell that starts with one of these as a formula (a tab or a carriage
# return first, then one of them, is read so too; printable has made those visible).
_FORMULA_START = frozenset("=+-@")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: object) -> str:
    """Any value as a CSV cell: None empty, a bool `true`/`false`, a number as written; text
    printable and, when it would start a formula and is not a number, behind a `'`. Every
    cell of every CSV BenchRig writes goes through here, so no column can forget it."""
    kind = type(value)
    if kind is str:  # most cells: names already made printable, figures already formatted
        text = str(value)
        if not (len(text) <= PRINT_CAP and text.isascii() and text.isprintable()):
            text = printable(text)
    elif value is None:
        return ""
    elif kind is bool:
        return "true" if value else "false"
    elif kind is int or kind is float:
        return str(value)
    else:
        text = printable(str(value))
    if text[:1] in _FORMULA_START and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def writer(out: io.StringIO) -> Callable[[Iterable[object]], None]:
    """A CSV row writer that puts every value through `cell`."""
    rows = csv.writer(out, lineterminator="\n")
    return lambda values: rows.writerow([cell(v) for v in values])


# One scale for every rate and share in a CSV: a fraction from 0 to 1, in columns named
# `…_rate`, `…_share` or `…_score` (a `_pct` beside 0–1 columns invited a 100× misreading).

CSV_COLUMNS = ["model", "agent", "runs", "passed", "failed", "errors", "errors_counted",
               "no_test", "pass_rate",
               "tokens_per_s", "eval_tok_sec_floored", "ttft_ms", "ttft_in_flight", "wall_s",
               "cost_usd", "reported_disagreements"]


def render_table(rows: list[ModelRow]) -> str:
    out = io.StringIO()
    write = writer(out)
    write(CSV_COLUMNS)
    for r in rows:
        write([r.model, r.agent, r.runs, r.passed, r.failed, r.errors,
                         r.counted_errors, r.no_test,
                         "" if r.pass_rate is None else f"{r.pass_rate:.4f}",
                         "" if r.tokens_per_s is None else f"{r.tokens_per_s:.3f}",
                         str(r.tokens_per_s_floored).lower(),
                         "" if r.ttft_ms is None else f"{r.ttft_ms:.1f}", r.ttft_in_flight,
                         "" if r.wall_s is None else f"{r.wall_s:.3f}",
                         "" if r.cost_usd is None else f"{r.cost_usd:.6f}",
                         r.disagreements])
    return out.getvalue()


def suite_columns(name: str) -> list[str]:
    """The CSV columns of one suite, in a fixed order: its own (its panel's, else the plain
    line's), its TTFT and truncation, then the figures it declares (`<suite>_<figure>`)."""
    own = panel(name).columns(name)
    if own is None:
        own = [f"{name}_{c}" for c in ("pass_rate", "passed", "count", "pass_rate_min",
                                       "pass_rate_max", "checks_passed", "check_count",
                                       "truncated_thinking", "thinking_token_share")]
    return [*own, f"{name}_avg_ttft_sec", f"{name}_ttft_in_flight", f"{name}_truncated_runs",
            *(f"{name}_{figure.name}" for figure in facet(name).figures)]


CARD_COLUMNS = ["composite_score", "composite_score_min", "composite_score_max",
                "composite_suites", "avg_ttft_sec", "ttft_in_flight", "truncated_runs"]


def _suite_values(s: SuiteCard) -> list[str | int | float | None]:
    own: list[str] | None = panel(s.suite).values(s)
    if own is None:
        own = [_number(s.rate), str(s.passed), str(s.scored), _number(_low(s.rate_span)),
               _number(_high(s.rate_span)), str(s.checks_passed), str(s.checks_total),
               str(s.truncated_thinking), _number(s.thinking_share)]
    return [*own, _number(s.avg_ttft_s), str(s.ttft_in_flight), str(s.truncated),
            *(_figure(figure.value) for figure in s.figures)]


def _figure(value: float | int | str | None) -> str | int | float | None:
    """A suite's declared figure: a float at the CSV's 4 decimals; `cell` guards a text."""
    return _number(value) if isinstance(value, float) else value


def card_columns(card: ModelCard) -> dict[str, str | int | float | None]:
    """The scorecard half of a CSV row, with the column names the documentation uses."""
    row: dict[str, str | int | float | None] = dict(zip(CARD_COLUMNS, [
        _number(card.composite), _number(_low(card.composite_span)),
        _number(_high(card.composite_span)), " ".join(card.composite_suites),
        _number(card.avg_ttft_s), str(card.ttft_in_flight), str(card.truncated)], strict=True))
    for suite in card.suites.values():
        row |= dict(zip(suite_columns(suite.suite), _suite_values(suite), strict=True))
    return row


LOAD_COLUMNS = ["task", "model", "driver", "provider", "label", "mode", "level", "requests",
                "errors", "ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms",
                "e2e_p50_ms", "e2e_p99_ms", "request_throughput", "output_tokens_per_s",
                "goodput_share", "goodput_slo", "knee", "frontier"]


def render_levels(levels: list[Record]) -> str:
    """The load sweeps' levels, one row per level, each curve's in level order: the
    figures the text's curves show (ms, per second, goodput a 0–1 share and its SLOs), the
    knee and the latency–throughput frontier as `true`/`false` (empty: no levels)."""
    from benchrig.report.load_curves import curves

    found = curves(levels)
    if not found:
        return ""
    out = io.StringIO()
    write = writer(out)
    write(LOAD_COLUMNS)
    for curve in found:
        knee, frontier = curve.knee(), curve.frontier()
        names = [label(v) if v else None for v in curve.key[:5]]
        for p in curve.points:
            write([*names, curve.mode, f"{p.level:g}", p.requests, p.errors,
                   *(_number(v, 3) for v in (p.ttft_p50, p.ttft_p99, p.itl_p50, p.itl_p99,
                                             p.e2e_p50, p.e2e_p99, p.req_per_s, p.tok_per_s,
                                             p.goodput)),
                   p.slo or None, p.level == knee, p.level in frontier])
    return out.getvalue()


def render_report(report: Report) -> str:
    """One row per model and agent: the per-model table's columns, then the scorecard's
    (a suite's columns appear when any model ran it; empty where this model did not).
    Load levels are not attempts: their own table (`render_levels`), after a blank line,
    or alone when the results are levels only."""
    levels = render_levels(report.levels)
    if levels and not report.groups:
        return levels
    models = _render_models(report)
    return models + ("\n" + levels if levels else "")


def _render_models(report: Report) -> str:
    table = list(csv.reader(io.StringIO(render_table(report.rows))))
    cards = report.cards
    # a registered suite's lines, by their order (an imported pack's line has no columns)
    present = in_order({name for card in cards for name in card.suites if registered(name)})
    columns = CARD_COLUMNS + [c for name in present for c in suite_columns(name)]
    wide = [panel(name).wide([c.suites[name] for c in cards if name in c.suites])
            for name in present]  # columns across every model's card: context's windows
    for more, _ in wide:
        columns += more
    out = io.StringIO()
    write = writer(out)
    write(table[0] + columns)
    for base, card in zip(table[1:], cards, strict=True):
        row = card_columns(card)
        for name, (_, cells) in zip(present, wide, strict=True):
            if name in card.suites:
                row |= cells(card.suites[name])
        write(base + [row.get(c, "") for c in columns])
    return out.getvalue()


ATTEMPT_COLUMNS = ["model", "agent", "driver", "provider", "label", "suite", "task",
                   "task_hash", "run_index", "run_id", "started_at", "result", "error_kind",
                   "counted", "checks_passed", "checks_total", "truncated", "finish_reason",
                   "temperature", "max_tokens", "context_size", "think", "in_flight",
                   "wall_s", "ttft_ms",
                   "tokens_per_s", "prefill_tokens_per_s", "input_tokens", "output_tokens",
                   "cost_usd", "disagreement"]


def _name(value: object) -> str | None:
    """A name from a result, short (textsafe.label); `cell` guards it as any text."""
    return None if value is None else label(value)


def render_attempts(results: list[Record]) -> str:
    """`--format csv --per-attempt`: one row per result, figures as measured (implausible
    ones empty), names printable."""
    out = io.StringIO()
    write = writer(out)
    write(ATTEMPT_COLUMNS)
    for r in results:
        settings, metrics = r.settings, r.metrics
        error = r.error if isinstance(r.error, dict) else {}
        write([
            *(_name(r.get(k)) for k in ("model", "agent", "driver", "provider", "label",
                                         "suite", "task", "task_hash")),
            r.run_index, _name(r.run_id), _name(r.started_at), r.result,
            _name(error.get("kind")), counts_against_model(r), r.checks.passed,
            r.checks.total, r.truncated, _name(r.finish_reason),
            *(settings.get(k) for k in ("temperature", "max_tokens", "context_size", "think",
                                         "in_flight")),
            *(metrics.get(k) for k in ("wall_s", "ttft_ms", "tokens_per_s",
                                       "prefill_tokens_per_s", "input_tokens",
                                       "output_tokens", "cost_usd")),
            _disagreed(metrics),
        ])
    return out.getvalue()


def _disagreed(metrics: Mapping[str, Any]) -> str:
    """The figures the agent's own report disagreed on, `;`-joined (names made short)."""
    return ";".join(label(name) for name in disagreement(metrics))
