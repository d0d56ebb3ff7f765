"""`benchrig summary --format json`: per model (and settings) and per suite, the figures with
their n, their 95 % intervals and the method of each, for CI and scripts."""

from __future__ import annotations

import json

from benchrig.attempts import unit
from benchrig.core.errors import counts_against_model
from benchrig.report.build import Report
from benchrig.report.by_task import TaskTable, task_table
from benchrig.report.grouping import Group
from benchrig.report.load_curves import json_curves
from benchrig.report.panel import Json, panel, span_json
from benchrig.report.scorecard import SuiteCard
from benchrig.report.select import OUTCOME_SETTINGS, changed_tasks
from benchrig.report.stats import CONFIDENCE, Estimate, TaskCount, pass_rate
from benchrig.report.table import ModelRow
from benchrig.resultio.record import Record

FORMAT_VERSION = 1
METHODS = {
    "pass_rate": "passed ÷ attempts that reached a verdict (a timeout or a model error "
                 "counts as failed; other errors are counted beside, never in it)",
    "pass_rate_interval": f"{CONFIDENCE:.0%} interval over tasks: Wilson score when each "
                          "task has one attempt, else a cluster-robust normal interval",
    "run_range": "lowest and highest per-run rate (run k = the k-th attempt of each task)",
    "composite": "mean of the suite scores present (coding at assertion level)",
    "means": "means over the attempts with a known, plausible figure",
    "ttft_in_flight": "how many TTFTs in the mean were measured with other attempts in "
                      "flight (settings.in_flight > 1): they include a queue",
    "reported_disagreements": "how many attempts' agents reported figures that differ "
                              "from the gateway's measurement beyond the tolerance "
                              "(metrics.disagreement); the figures shown are the gateway's",
}



def task_counts(results: list[Record]) -> list[TaskCount]:
    """(passes, attempts that reached a verdict) of each task in `results`; an attempt of a
    suite counted in units (context: by window, found of windows with a verdict) counts
    them, as the table and its card do (panel.Panel.units)."""
    tally: dict[tuple[str, str], list[int]] = {}
    for r in results:
        if counts_against_model(r):
            counts = tally.setdefault((r.suite, unit(r)), [0, 0])
            units = panel(r.suite).units(r) if r.result in ("pass", "fail") else None
            if units is not None:
                counts[0] += units[0]
                counts[1] += units[1]
                continue
            counts[0] += r.result == "pass"
            counts[1] += 1
    return [(c, n) for c, n in tally.values()]


def estimate(found: Estimate | None) -> Json | None:
    if found is None:
        return None
    out: Json = {"value": found.value, "low": found.low, "high": found.high,
                 "n_tasks": found.n, "method": found.method}
    for key in ("p_value", "seed", "resamples"):
        if getattr(found, key) is not None:
            out[key] = getattr(found, key)
    return out


def _suite(card: SuiteCard, results: list[Record]) -> Json:
    extra: Json = dict(panel(card.suite).json(card))  # its own: tool-use rates, context windows
    if card.figures:  # the figures its suite declares (SuiteReport.figures), by name
        extra["figures"] = {figure.name: figure.value for figure in card.figures}
    if card.pass_at is not None:  # an imported pack's own line: its figure is pass@k
        extra["pack"] = {"pass_at": {str(k): v for k, v in card.pass_at.items()},
                         "problems": card.problems}
    return {
        "attempts": len(results), "passed": card.passed, "scored": card.scored,
        "errors": card.errors, "runs": card.runs,
        "pass_rate": estimate(pass_rate(task_counts(results))) if card.facet.rated else None,
        "run_range": span_json(card.rate_span),
        "checks": {"passed": card.checks_passed, "total": card.checks_total,
                   "rate": card.checks_rate, "run_range": span_json(card.checks_span)},
        "score": card.score,
        "avg_ttft_s": card.avg_ttft_s, "ttft_in_flight": card.ttft_in_flight,
        "decode_tokens_per_s": card.decode_tps,
        "prefill_tokens_per_s": card.prefill_tps, "truncated": card.truncated, **extra,
    }


def _settings(group: Group) -> Json:
    first = group.results[0]
    return {**{name: first.settings.get(name) for name in OUTCOME_SETTINGS},
            "label": first.label}


def _row(row: ModelRow) -> Json:
    return {"attempts": row.runs, "passed": row.passed, "failed": row.failed,
            "errors": row.errors, "errors_counted": row.counted_errors,
            "no_test": row.no_test, "ttft_ms": row.ttft_ms, "ttft_in_flight": row.ttft_in_flight,
            "tokens_per_s": row.tokens_per_s, "tokens_per_s_floored": row.tokens_per_s_floored,
            "wall_s": row.wall_s, "cost_usd": row.cost_usd,
            "reported_disagreements": row.disagreements}


def summary_json(report: Report) -> Json:
    models = []
    for group, row, card in zip(report.groups, report.rows, report.cards, strict=True):
        per_suite: dict[str, list[Record]] = {}
        for r in group.results:  # by the card's lines: a pack's tasks are its own
            per_suite.setdefault(card.line(r), []).append(r)
        models.append({
            "model": group.model, "agent": group.agent, "variant": group.variant or None,
            "settings": _settings(group), **_row(row),
            "pass_rate": estimate(pass_rate(task_counts(group.results))),
            "composite": {"value": card.composite, "run_range": span_json(card.composite_span),
                          "suites": list(card.composite_suites)},
            # a card keys its suites by their printable name
            "suites": {suite: _suite(card.suites[suite], results)
                       for suite, results in per_suite.items()},
        })
    everything = [r for g in report.groups for r in g.results]
    table = task_table(report.groups)
    return {
        "format": FORMAT_VERSION, "results": len(everything), "methods": METHODS,
        "changed_tasks": changed_tasks(everything),
        "models": models,
        "tasks": _tasks(table),
        "load": json_curves(report.levels),  # a sweep's levels: not attempts, apart
    }


def _tasks(table: TaskTable) -> list[Json]:
    """Each task's cells, one per model row (in `models`' order); null where not run."""
    return [{"suite": suite, "task": task, "cells": [
        None if c is None else {"passed": c.passed, "scored": c.scored, "attempts": c.attempts}
        for c in table.cells[(suite, task)]]} for suite, task in table.tasks]


def render_report(report: Report) -> str:
    return json.dumps(summary_json(report), indent=2, allow_nan=False) + "\n"


def render_table(rows: list[ModelRow]) -> str:
    return json.dumps([{"model": r.model, "agent": r.agent, **_row(r)} for r in rows],
                      indent=2, allow_nan=False) + "\n"


def render_task_table(table: TaskTable) -> str:
    """`--by task --format json`: the columns, then each task's cells in their order."""
    return json.dumps({"columns": table.columns, "tasks": _tasks(table)}, indent=2,
                      allow_nan=False) + "\n"
