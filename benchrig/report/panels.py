"""The built-in suites' own figures in every view (the report side of their facets): speed
per task, coding's two levels, context by window, tool use's rates. A suite's facet names
its panel (`SuiteReport.panel`); a suite without one gets `PLAIN_PANEL`, the pass-rate line."""

from __future__ import annotations

import dataclasses

from benchrig.report.cards import SuiteCard
from benchrig.report.chart import CHART_WIDTH, ROW, Bar, colour
from benchrig.report.context import (
    ContextFigures,
    StepFigures,
    context_figures,
    step_columns,
    step_values,
    window_counts,
    windows,
)
from benchrig.report.grouping import Group
from benchrig.report.panel import Json, Panel, Wide, high, low, number, panel, span_json
from benchrig.report.phrases import pct, rate_text, seconds, span
from benchrig.report.scorecard import speed_figures
from benchrig.report.tooluse import (
    TOOL_COUNTS,
    TOOL_RATES,
    Rate,
    ToolFigures,
    tool_figures,
    tool_line,
)
from benchrig.resultio.record import Record
from benchrig.textsafe import label


class SpeedPanel(Panel):
    """Speed measures: figures per task (a short prompt and a sustained generation differ)."""

    def extend(self, card: SuiteCard, results: list[Record]) -> SuiteCard:
        return dataclasses.replace(card, speed=speed_figures(results))

    def detail(self, card: SuiteCard, with_rate: bool) -> str:
        return f"{len(card.speed)} task{'s' if len(card.speed) != 1 else ''}, not scored"

    def columns(self, name: str) -> list[str]:
        return ["speed_eval_tok_sec", "speed_eval_tok_sec_floored", "speed_prompt_eval_tok_sec",
                "speed_avg_output_tokens"]

    def values(self, card: SuiteCard) -> list[str]:
        return [number(card.decode_tps, 3), str(card.decode_floored).lower(),
                number(card.prefill_tps, 3), number(card.avg_output_tokens, 1)]


class CodingPanel(Panel):
    """Coding at two levels: whole tasks, and assertions (its score)."""

    def detail(self, card: SuiteCard, with_rate: bool) -> str:
        return (f"Tasks Passed: {card.passed}/{card.scored} ({pct(card.rate)})"
                f"{span(card.rate_span)} · Assertions: {card.checks_passed}/"
                f"{card.checks_total} ({pct(card.checks_rate)}){span(card.checks_span)}")

    def columns(self, name: str) -> list[str]:
        return ["coding_task_pass_rate", "coding_tasks_passed", "coding_task_count",
                "coding_assertions_passed", "coding_assertion_count", "coding_pass_rate",
                "coding_pass_rate_min", "coding_pass_rate_max"]

    def values(self, card: SuiteCard) -> list[str]:
        return [number(card.rate), str(card.passed), str(card.scored), str(card.checks_passed),
                str(card.checks_total), number(card.checks_rate), number(low(card.checks_span)),
                number(high(card.checks_span))]


class ToolUsePanel(Panel):
    """Tool use: its own rates, each with its numerator and denominator (out of the
    composite)."""

    def extend(self, card: SuiteCard, results: list[Record]) -> SuiteCard:
        return dataclasses.replace(card, tools=tool_figures(results))

    def detail(self, card: SuiteCard, with_rate: bool) -> str | None:
        return None if card.tools is None else tool_line(card.tools, span(card.rate_span))

    def columns(self, name: str) -> list[str]:
        own = [f"tool_use_{rate}{part}" for rate in TOOL_RATES
               for part in ("", "_numerator", "_denominator")]
        return own + [f"tool_use_{c}" for c in TOOL_COUNTS]

    def values(self, card: SuiteCard) -> list[str] | None:
        if card.tools is None:
            return None
        rates: list[Rate] = [getattr(card.tools, rate) for rate in TOOL_RATES]
        own = [v for r in rates for v in (number(r.value), str(r.numerator),
                                          str(r.denominator))]
        return own + [str(getattr(card.tools, c)) for c in TOOL_COUNTS]

    def json(self, card: SuiteCard) -> Json:
        return {} if card.tools is None else {"tool_use": tool_json(card.tools)}

    def html(self, groups: list[Group]) -> Json:
        return {"tool_rates": tool_rates(groups, self)}


def shown_by(results: list[Record], own: Panel) -> list[Record]:
    """The results of the suites whose figures `own` shows, in their order: each suite's
    panel asked once, not once a result (100,000 registry look-ups a panel)."""
    suites = {suite for suite in {r.suite for r in results} if panel(suite) is own}
    return [r for r in results if r.suite in suites]


def tool_json(figures: ToolFigures) -> Json:
    """Each tool-use rate by its name (as the CSV's `tool_use_<rate>`), with its counts."""
    rates = {name: getattr(figures, name) for name in TOOL_RATES}
    return {**{name: {"value": r.value, "numerator": r.numerator,
                      "denominator": r.denominator} for name, r in rates.items()},
            **{name: getattr(figures, name) for name in TOOL_COUNTS}}


def tool_rates(groups: list[Group], own: Panel) -> list[Json]:
    """The six tool-use rates per model row that ran a suite shown by `own`, as bars (a rate
    with an empty denominator is n/a, drawn as no bar)."""
    rows = []
    for i, group in enumerate(groups):
        tools = shown_by(group.results, own)
        if not tools:
            continue
        f = tool_figures(tools)
        rates = [("task success", f.task_success), ("tool selection", f.selection),
                 ("arguments", f.arguments), ("abstention", f.abstention),
                 ("false calls", f.false_calls), ("structured calls", f.structured)]
        rows.append({"name": label(f"{group.name} · {group.agent}"), "colour": colour(i),
                     "bars": [Bar(j * ROW, (rate.value or 0.0) * CHART_WIDTH, name,
                                  rate.text(), colour(i)) for j, (name, rate) in
                              enumerate(rates)]})
    return rows


class ContextPanel(Panel):
    """Context by window: each window one verdict (context_retrieval), figures per window."""

    in_units = True

    def units(self, result: Record) -> tuple[int, int]:
        return window_counts(result)

    def extend(self, card: SuiteCard, results: list[Record]) -> SuiteCard:
        return dataclasses.replace(card, context=context_figures(results))

    def detail(self, card: SuiteCard, with_rate: bool) -> str:
        windows_text = f"{card.checks_passed}/{card.checks_total} windows"
        text = (f"context_retrieval_pct {rate_text(card.checks_rate, card.checks_span)} "
                f"({windows_text})" if with_rate else windows_text)
        if card.context is not None:
            failed = sum(s.errors for s in card.context.steps)
            if failed:  # out of the retrieval, never out of sight
                text += (f" · {failed} window{'s' if failed != 1 else ''} failed by infra or "
                         "harness")
            text += f" · spill point {card.context.spill}"
            if card.context.load_time_s is not None:
                text += f" · load {seconds(card.context.load_time_s)} per window (warm-up)"
        return text

    def columns(self, name: str) -> list[str]:
        return ["context_retrieval_rate", "context_retrieval_rate_min",
                "context_retrieval_rate_max", "context_windows_passed", "context_window_count",
                "context_pass_rate", "context_passed", "context_count", "context_spill_point",
                "load_time_sec"]

    def values(self, card: SuiteCard) -> list[str]:  # a fraction, as every rate of the CSV
        return [number(card.checks_rate), number(low(card.checks_span)),
                number(high(card.checks_span)), str(card.checks_passed),
                str(card.checks_total), number(card.rate), str(card.passed), str(card.scored),
                card.context.spill if card.context else "",
                number(card.context.load_time_s if card.context else None)]

    def wide(self, cards: list[SuiteCard]) -> Wide:
        found = windows(c.context for c in cards if c.context is not None)
        return step_columns(found), lambda card: step_values(card.context, found)

    def json(self, card: SuiteCard) -> Json:
        """context_retrieval by name: windows found ÷ windows with a verdict, and per window."""
        figures: ContextFigures | None = card.context
        return {
            "context_retrieval": {"value": card.checks_rate, "found": card.checks_passed,
                                  "windows": card.checks_total,
                                  "run_range": span_json(card.checks_span)},
            "spill_point": None if figures is None else figures.spill,
            "windows": [] if figures is None else [
                {"task": s.task, "window": s.window, "found": s.passed, "decided": s.decided,
                 "errors": s.errors, "retrieval": s.retrieval, "ttft_s": s.ttft_s,
                 "decode_tokens_per_s": s.decode_tps} for s in figures.steps],
        }

    def html(self, groups: list[Group]) -> Json:
        return {"context_chart": context_chart(groups, self)}


def context_chart(groups: list[Group], own: Panel) -> Json | None:
    """A suite shown by `own` (context) per model row: mean TTFT at each window and the share of its
    needles retrieved there, from `evidence.context.steps` (one point per window, never
    one per attempt at the sum of its windows). None when no row has a step."""
    series = []
    for i, group in enumerate(groups):
        steps = context_figures(shown_by(group.results, own)).steps
        windows: dict[int, list[StepFigures]] = {}
        for step in steps:
            windows.setdefault(step.window, []).append(step)
        points = []
        for window, at in sorted(windows.items()):
            ttft = [s.ttft_s for s in at if s.ttft_s is not None]
            attempts = sum(s.attempts for s in at)
            points.append((window, sum(ttft) / len(ttft) * 1000 if ttft else None,
                           sum(s.passed for s in at) / attempts if attempts else None))
        if points:
            series.append((i, points))
    if not series:
        return None
    top_x = max(w for _, points in series for w, _, _ in points) or 1
    top_y = max((t for _, points in series for _, t, _ in points if t), default=0.0) or 1.0

    def x(window: int) -> float:
        return 40 + window / top_x * CHART_WIDTH

    lines: list[Json] = []
    for i, points in series:
        timed = [(w, t) for w, t, _ in points if t is not None]
        retrieved = [(w, r) for w, _, r in points if r is not None]
        lines.append({
            "colour": colour(i), "name": label(f"{groups[i].name} · {groups[i].agent}"),
            "ttft": [{"x": x(w), "y": 190 - t / top_y * 170,
                      "title": f"window {w}: {t:.0f} ms"} for w, t in timed],
            "retrieval": [{"x": x(w), "y": 190 - r * 170,
                           "title": f"window {w}: {r * 100:.0f}% retrieved"}
                          for w, r in retrieved]})
    for made in lines:
        for kind in ("ttft", "retrieval"):
            dots: list[Json] = made[kind]
            made[f"{kind}_path"] = " ".join(f"{p['x']:.1f},{p['y']:.1f}" for p in dots)
    return {"top_x": top_x, "top_y": f"{top_y:.0f}", "series": lines}


SPEED = SpeedPanel()
CODING = CodingPanel()
TOOL_USE = ToolUsePanel()
CONTEXT = ContextPanel()
