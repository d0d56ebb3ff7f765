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
from benchrig.report.context import step_columns, step_values, windows
from benchrig.report.disagreed import disagreement
from benchrig.report.scorecard import ModelCard, Span, SuiteCard
from benchrig.report.table import ModelRow
from benchrig.report.tooluse import TOOL_COUNTS, TOOL_RATES, Rate
from benchrig.resultio.record import Record
from benchrig.suites import SUITES
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


def _number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def suite_columns(name: str) -> list[str]:
    """The CSV columns of one suite, in a fixed order."""
    if name == "coding":
        own = ["coding_task_pass_rate", "coding_tasks_passed", "coding_task_count",
               "coding_assertions_passed", "coding_assertion_count", "coding_pass_rate",
               "coding_pass_rate_min", "coding_pass_rate_max"]
    elif name == "speed":
        own = ["speed_eval_tok_sec", "speed_eval_tok_sec_floored", "speed_prompt_eval_tok_sec",
               "speed_avg_output_tokens"]
    elif name == "tool_use":
        own = [f"tool_use_{rate}{part}" for rate in TOOL_RATES
               for part in ("", "_numerator", "_denominator")]
        own += [f"tool_use_{c}" for c in TOOL_COUNTS]
    elif name == "context":
        own = ["context_retrieval_rate", "context_retrieval_rate_min", "context_retrieval_rate_max",
               "context_windows_passed", "context_window_count", "context_pass_rate",
               "context_passed", "context_count", "context_spill_point", "load_time_sec"]
    else:
        own = [f"{name}_{c}" for c in ("pass_rate", "passed", "count", "pass_rate_min",
                                       "pass_rate_max", "checks_passed", "check_count",
                                       "truncated_thinking", "thinking_token_share")]
    return [*own, f"{name}_avg_ttft_sec", f"{name}_ttft_in_flight", f"{name}_truncated_runs"]


CARD_COLUMNS = ["composite_score", "composite_score_min", "composite_score_max",
                "composite_suites", "avg_ttft_sec", "ttft_in_flight", "truncated_runs"]


def _low(value: Span | None) -> float | None:
    return value.low if value else None


def _high(value: Span | None) -> float | None:
    return value.high if value else None


def _suite_values(s: SuiteCard) -> list[str]:
    if s.suite == "coding":
        own = [_number(s.rate), str(s.passed), str(s.scored), str(s.checks_passed),
               str(s.checks_total), _number(s.checks_rate), _number(_low(s.checks_span)),
               _number(_high(s.checks_span))]
    elif s.suite == "speed":
        own = [_number(s.decode_tps, 3), str(s.decode_floored).lower(),
               _number(s.prefill_tps, 3), _number(s.avg_output_tokens, 1)]
    elif s.tools is not None:
        rates: list[Rate] = [getattr(s.tools, rate) for rate in TOOL_RATES]
        own = [v for r in rates for v in (_number(r.value), str(r.numerator),
                                          str(r.denominator))]
        own += [str(getattr(s.tools, c)) for c in TOOL_COUNTS]
    elif s.suite == "context":  # a fraction, as every rate of the CSV
        own = [_number(s.checks_rate), _number(_low(s.checks_span)),
               _number(_high(s.checks_span)), str(s.checks_passed), str(s.checks_total),
               _number(s.rate), str(s.passed), str(s.scored),
               s.context.spill if s.context else "",
               _number(s.context.load_time_s if s.context else None)]
    else:
        own = [_number(s.rate), str(s.passed), str(s.scored), _number(_low(s.rate_span)),
               _number(_high(s.rate_span)), str(s.checks_passed), str(s.checks_total),
               str(s.truncated_thinking), _number(s.thinking_share)]
    return [*own, _number(s.avg_ttft_s), str(s.ttft_in_flight), str(s.truncated)]


def card_columns(card: ModelCard) -> dict[str, str]:
    """The scorecard half of a CSV row, with the column names the documentation uses."""
    row = dict(zip(CARD_COLUMNS, [
        _number(card.composite), _number(_low(card.composite_span)),
        _number(_high(card.composite_span)), " ".join(card.composite_suites),
        _number(card.avg_ttft_s), str(card.ttft_in_flight), str(card.truncated)], strict=True))
    for suite in card.suites.values():
        row |= dict(zip(suite_columns(suite.suite), _suite_values(suite), strict=True))
    return row


def render_report(report: Report) -> str:
    """One row per model and agent: the per-model table's columns, then the scorecard's
    (a suite's columns appear when any model ran it; empty where this model did not)."""
    table = list(csv.reader(io.StringIO(render_table(report.rows))))
    cards = report.cards
    present = {name for card in cards for name in card.suites}
    columns = CARD_COLUMNS + [c for name in SUITES if name in present
                              for c in suite_columns(name)]
    contexts = [c.suites["context"].context for c in cards if "context" in c.suites]
    found = windows(f for f in contexts if f is not None)
    columns += step_columns(found)
    out = io.StringIO()
    write = writer(out)
    write(table[0] + columns)
    for base, card in zip(table[1:], cards, strict=True):
        row = card_columns(card)
        if "context" in card.suites:
            row |= step_values(card.suites["context"].context, found)
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
