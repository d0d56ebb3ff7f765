"""Scorecards → text, Markdown report and CSV export (beside the per-model table)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from benchrig.attempts import without_retried_errors
from benchrig.errors import counts_against_model
from benchrig.metrics import any_floored, mean_metric
from benchrig.report.scorecard import ModelCard, Span, SpeedFigures, SuiteCard, scorecards
from benchrig.report.table import errors_text, model_rows
from benchrig.report.table import render_csv as table_csv
from benchrig.report.table import render_markdown as table_markdown
from benchrig.report.table import render_text as table_text
from benchrig.suites import SUITES
from benchrig.textsafe import label

WARN = "⚠"
COMPOSITE_FORMULA = ("composite = mean of the suite scores present: coding at assertion "
                     "level (coding_pass_rate), reasoning, polish and context at task level; "
                     "speed and tool use are not in it")


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def span(value: Span | None) -> str:
    """` [25.0-58.3]` when there are two runs or more (one run has no spread to show)."""
    if value is None or value.runs < 2:
        return ""
    return f" [{value.low * 100:.1f}-{value.high * 100:.1f}]"


def rate_text(rate: float | None, value: Span | None) -> str:
    return pct(rate) + span(value)


def tps(value: float | None, floored: bool = False) -> str:
    """Tokens per second; `~` marks a rate computed over the 0.001 s floor."""
    return "—" if value is None else f"{'~' if floored else ''}{value:.1f} t/s"


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


DETERMINISTIC = "deterministic runs (temperature 0)"


def interval_note(cards: list[ModelCard]) -> str:
    runs = max((s.runs for c in cards for s in c.suites.values()), default=1)
    note = ("pass rates over the attempts that reached a verdict (a timeout counts as "
            "failed; other errors are shown beside, never counted)")
    if runs >= 2:
        note += (f"; [low-high] = range of the per-run rates, min-max over up to {runs} "
                 "runs")
    if any(s.deterministic for c in cards for s in c.suites.values()):
        note += (f"; {DETERMINISTIC}: every run was greedy decoding, so the runs repeat one "
                 "generation and a range shows no sampling variance")
    return note


def _coding(card: SuiteCard) -> str:
    return (f"Tasks Passed: {card.passed}/{card.scored} ({pct(card.rate)})"
            f"{span(card.rate_span)} · Assertions: {card.checks_passed}/{card.checks_total} "
            f"({pct(card.checks_rate)}){span(card.checks_span)}")


def speed_line(f: SpeedFigures) -> str:
    """One speed task: decode rate [range over runs], prefill, TTFT, tokens, finish reasons."""
    decode = tps(f.decode_tps, f.decode_floored)
    if f.decode_span is not None and f.decode_span.runs >= 2:
        decode += f" [{f.decode_span.low:.1f}-{f.decode_span.high:.1f}]"
    tokens = "—" if f.output_tokens is None else f"{f.output_tokens:.0f}"
    finish = ", ".join(f"{k} {v}" for k, v in f.finish_reasons.items()) or "—"
    return (f"decode {decode} · prefill {tps(f.prefill_tps)} · TTFT {seconds(f.avg_ttft_s)} · "
            f"{tokens} tokens (finish: {finish})")


def _speed(card: SuiteCard) -> str:
    return f"{len(card.speed)} task{'s' if len(card.speed) != 1 else ''}, not scored"


def suite_detail(card: SuiteCard, with_rate: bool = True) -> str:
    """The suite's own figures: coding levels, speed rates, or passes and checks."""
    if card.suite == "coding":
        text = _coding(card)
    elif card.suite == "speed":
        text = _speed(card)
    else:
        text = f"{card.passed}/{card.scored} passed"
        if with_rate:
            text = f"{rate_text(card.rate, card.rate_span)} ({card.passed}/{card.scored})"
        if card.max_checks > 1:
            text += f" · checks {card.checks_passed}/{card.checks_total}"
        if card.thinking_share is not None and card.thinking_tokens:
            text += f" · thinking {pct(card.thinking_share)} of output tokens"
    if card.errors:
        text += f" · {errors_text(card.errors)}"
    if card.deterministic:
        text += f" · {DETERMINISTIC}"
    return text


def _flags(card: SuiteCard) -> str:
    flags = []
    if card.truncated:
        flags.append(f"{WARN} {card.truncated} truncated")
    if card.truncated_thinking:
        flags.append(f"{card.truncated_thinking} cut off while thinking")
    return " · ".join(flags)


def _composite(card: ModelCard) -> str:
    if card.composite is None:
        return "composite —"
    return (f"composite {pct(card.composite)}{span(card.composite_span)} "
            f"(mean of {', '.join(card.composite_suites)})")


def render_cards_text(cards: list[ModelCard]) -> str:
    lines = [f"Scorecards — {interval_note(cards)}"]
    for card in cards:
        head = [f"{card.model} · {card.agent}", _composite(card),
                f"avg TTFT {seconds(card.avg_ttft_s)}"]
        if card.truncated:
            head.append(f"{WARN} {card.truncated} truncated")
        lines += ["", "  ".join([head[0], " · ".join(head[1:])])]
        width = max(len(s) for s in card.suites)
        for suite in card.suites.values():
            parts = [suite_detail(suite), f"avg TTFT {seconds(suite.avg_ttft_s)}"]
            if _flags(suite):
                parts.append(_flags(suite))
            lines.append(f"  {suite.suite.ljust(width)}  {' · '.join(parts)}")
            task_width = max((len(f.task) for f in suite.speed), default=0)
            lines += [f"    {f.task.ljust(task_width)}  {speed_line(f)}" for f in suite.speed]
    lines += ["", COMPOSITE_FORMULA[0].upper() + COMPOSITE_FORMULA[1:] + "."]
    return "\n".join(lines) + "\n"


def render_text(results: list[dict[str, Any]]) -> str:
    """The per-model table, then the scorecards."""
    return table_text(model_rows(results)) + "\n" + render_cards_text(scorecards(results))


def _task_rows(results: list[dict[str, Any]], card: ModelCard) -> list[str]:
    mine = [r for r in without_retried_errors(results)
            if (label(r["model"]), label(r["agent"])) == (card.model, card.agent)]
    tasks: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in mine:
        tasks.setdefault((label(r["suite"]), label(r["task"])), []).append(r)
    order = list(card.suites)
    rows = []
    for (suite, task), group in sorted(tasks.items(), key=lambda i: (order.index(i[0][0]),
                                                                      i[0][1])):
        scored = [r for r in group if counts_against_model(r)]
        passed = f"{sum(r['result'] == 'pass' for r in scored)}/{len(scored)}" if scored else "—"
        errors = len([r for r in group if r["result"] == "error"]) - len(
            [r for r in scored if r["result"] == "error"])
        if errors:
            passed = (f"{passed}, " if scored else "") + errors_text(errors)
        checks = sum(r["checks"]["total"] for r in scored)
        checks_text = f"{sum(r['checks']['passed'] for r in scored)}/{checks}" if checks else "—"
        cut = sum(bool(r["truncated"]) for r in group)
        metrics = [r["metrics"] for r in group]
        ttft = mean_metric(metrics, "ttft_ms")
        rate = mean_metric(metrics, "tokens_per_s")
        prefill = mean_metric(metrics, "prefill_tokens_per_s")
        rows.append(" | ".join([
            "", suite, task, str(len(group)), passed, checks_text,
            f"{WARN} {cut}" if cut else "0",
            seconds(None if ttft is None else ttft / 1000),
            tps(rate, any_floored(metrics)), tps(prefill), ""]).strip())
    return rows


def render_cards_markdown(cards: list[ModelCard], results: list[dict[str, Any]]) -> str:
    lines = ["## Scorecards", "", f"Scores are {interval_note(cards)}. "
             f"The {COMPOSITE_FORMULA}. {WARN} marks responses cut off at the token limit "
             "before the answer was complete (`truncated_runs`); `~` marks a decode rate "
             "computed over the 0.001 s floor."]
    for card in cards:
        lines += ["", f"### {card.model} · {card.agent}", "",
                  "| suite | score | runs | detail | avg TTFT | truncated |",
                  "|---|---|---|---|---|---|"]
        composite = "—" if card.composite is None else rate_text(card.composite,
                                                                   card.composite_span)
        runs = max((s.runs for s in card.suites.values()), default=0)
        lines.append(f"| **composite** | **{composite}** | {runs} | mean of "
                     f"{', '.join(card.composite_suites) or '—'} | {seconds(card.avg_ttft_s)} | "
                     f"{f'{WARN} {card.truncated}' if card.truncated else '0'} |")
        for suite in card.suites.values():
            score = rate_text(suite.score, suite.score_span) if suite.score is not None else "—"
            cut = f"{WARN} {suite.truncated}" if suite.truncated else "0"
            lines.append(f"| {suite.suite} | {score} | {suite.runs} | "
                         f"{suite_detail(suite, with_rate=False)} | "
                         f"{seconds(suite.avg_ttft_s)} | {cut} |")
        lines += ["", "| suite | task | attempts | passed | checks | truncated | avg TTFT | "
                  "decode | prefill |", "|---|---|---|---|---|---|---|---|---|"]
        lines += _task_rows(results, card)
    return "\n".join(lines) + "\n"


def render_markdown(results: list[dict[str, Any]]) -> str:
    """The Markdown report: the per-model table, then a scorecard section per model."""
    return ("## Per-model table\n\n" + table_markdown(model_rows(results)) + "\n"
            + render_cards_markdown(scorecards(results), results))


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
    else:
        own = [f"{name}_{c}" for c in ("pass_rate", "passed", "count", "pass_rate_min",
                                       "pass_rate_max", "checks_passed", "check_count",
                                       "truncated_thinking", "thinking_token_share")]
    return [*own, f"{name}_avg_ttft_sec", f"{name}_truncated_runs"]


CARD_COLUMNS = ["composite_score", "composite_score_min", "composite_score_max",
                "composite_suites", "avg_ttft_sec", "truncated_runs"]


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
    else:
        own = [_number(s.rate), str(s.passed), str(s.scored), _number(_low(s.rate_span)),
               _number(_high(s.rate_span)), str(s.checks_passed), str(s.checks_total),
               str(s.truncated_thinking), _number(s.thinking_share)]
    return [*own, _number(s.avg_ttft_s), str(s.truncated)]


def card_columns(card: ModelCard) -> dict[str, str]:
    """The scorecard half of a CSV row, with the column names the documentation uses."""
    row = dict(zip(CARD_COLUMNS, [
        _number(card.composite), _number(_low(card.composite_span)),
        _number(_high(card.composite_span)), " ".join(card.composite_suites),
        _number(card.avg_ttft_s), str(card.truncated)], strict=True))
    for suite in card.suites.values():
        row |= dict(zip(suite_columns(suite.suite), _suite_values(suite), strict=True))
    return row


def render_csv(results: list[dict[str, Any]]) -> str:
    """One row per model and agent: the per-model table's columns, then the scorecard's
    (a suite's columns appear when any model ran it; empty where this model did not)."""
    table = list(csv.reader(io.StringIO(table_csv(model_rows(results)))))
    cards = scorecards(results)
    present = {name for card in cards for name in card.suites}
    columns = CARD_COLUMNS + [c for name in SUITES if name in present
                              for c in suite_columns(name)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table[0] + columns)
    for base, card in zip(table[1:], cards, strict=True):
        row = card_columns(card)
        writer.writerow(base + [row.get(c, "") for c in columns])
    return out.getvalue()


RENDERERS: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "table": render_text, "markdown": render_markdown, "csv": render_csv,
}
