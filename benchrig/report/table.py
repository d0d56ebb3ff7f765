"""Results → per-model tables (plain text, Markdown, CSV)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchrig.attempts import without_retried_errors
from benchrig.errors import counts_against_model
from benchrig.metrics import any_floored, mean_metric
from benchrig.textsafe import label

ERRORS_NOTE = ("pass rate = passed ÷ attempts that reached a verdict (a timeout counts as "
               "failed); errors of the infrastructure or of BenchRig are shown beside it, "
               "never counted in it")


@dataclass(frozen=True)
class ModelRow:
    """One line of the benchmark-runner's table: a model as driven by one agent or runtime."""

    model: str
    agent: str
    runs: int
    passed: int
    failed: int
    errors: int
    no_test: int
    tokens_per_s: float | None
    tokens_per_s_floored: bool
    ttft_ms: float | None
    wall_s: float | None
    cost_usd: float | None
    counted_errors: int = 0  # errors of the model's own doing (timeouts): in the rate

    @property
    def scored(self) -> int:
        """Attempts that reached a verdict: what the pass rate is over."""
        return self.passed + self.failed + self.counted_errors

    @property
    def uncounted_errors(self) -> int:
        """Errors that are not the model's doing: shown beside the rate, not in it."""
        return self.errors - self.counted_errors

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


def model_rows(results: list[dict[str, Any]]) -> list[ModelRow]:
    """One row per (model, agent); an error that a retry replaced is left out."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for result in without_retried_errors(results):
        groups.setdefault((result["model"], result["agent"]), []).append(result)
    rows = []
    for (model, agent), group in sorted(groups.items()):
        outcomes = [r["result"] for r in group]
        metrics = [r["metrics"] for r in group]
        rows.append(ModelRow(
            model=label(model),
            agent=label(agent),
            runs=len(group),
            passed=outcomes.count("pass"),
            failed=outcomes.count("fail"),
            errors=outcomes.count("error"),
            no_test=outcomes.count("no-test"),
            counted_errors=sum(r["result"] == "error" and counts_against_model(r)
                               for r in group),
            tokens_per_s=mean_metric(metrics, "tokens_per_s"),
            tokens_per_s_floored=any_floored(metrics),
            ttft_ms=mean_metric(metrics, "ttft_ms"),
            wall_s=mean_metric(metrics, "wall_s"),
            cost_usd=mean_metric(metrics, "cost_usd"),
        ))
    return rows


def errors_text(count: int) -> str:
    return f"{count} error{'s' if count != 1 else ''}"


def _num(value: float | None, fmt: str, floored: bool = False) -> str:
    if value is None:
        return "—"
    return ("~" if floored else "") + format(value, fmt)


HEADERS = ["model", "agent", "runs", "pass rate", "tokens/s", "TTFT ms", "wall s", "cost $"]


def _cells(row: ModelRow) -> list[str]:
    rate = "—" if row.pass_rate is None else f"{row.pass_rate:.0%} ({row.passed}/{row.scored})"
    if row.uncounted_errors:
        rate += f", {errors_text(row.uncounted_errors)}"
    return [
        row.model, row.agent, str(row.runs), rate,
        _num(row.tokens_per_s, ".1f", row.tokens_per_s_floored),
        _num(row.ttft_ms, ".0f"), _num(row.wall_s, ".2f"), _num(row.cost_usd, ".5f"),
    ]


def render_text(rows: list[ModelRow]) -> str:
    table = [HEADERS, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
             for line in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(r.errors for r in rows):
        lines.append(ERRORS_NOTE[0].upper() + ERRORS_NOTE[1:] + ".")
    return "\n".join(lines) + "\n"


def render_markdown(rows: list[ModelRow]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    if any(r.errors for r in rows):
        lines += ["", ERRORS_NOTE[0].upper() + ERRORS_NOTE[1:] + "."]
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ["model", "agent", "runs", "passed", "failed", "errors", "errors_counted",
               "no_test", "pass_rate",
               "tokens_per_s", "eval_tok_sec_floored", "ttft_ms", "wall_s", "cost_usd"]


def render_csv(rows: list[ModelRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow([r.model, r.agent, r.runs, r.passed, r.failed, r.errors,
                         r.counted_errors, r.no_test,
                         "" if r.pass_rate is None else f"{r.pass_rate:.4f}",
                         "" if r.tokens_per_s is None else f"{r.tokens_per_s:.3f}",
                         str(r.tokens_per_s_floored).lower(),
                         "" if r.ttft_ms is None else f"{r.ttft_ms:.1f}",
                         "" if r.wall_s is None else f"{r.wall_s:.3f}",
                         "" if r.cost_usd is None else f"{r.cost_usd:.6f}"])
    return out.getvalue()


RENDERERS: dict[str, Callable[[list[ModelRow]], str]] = {
    "table": render_text, "markdown": render_markdown, "csv": render_csv,
}
