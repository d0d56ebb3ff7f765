"""Tool-use results → their rates, each with its numerator and denominator (docs/suites.md#
tool-use): over the eligible attempts only (a verdict, or a timeout: the model's doing);
unsupported cases and other errors are counted apart; an empty denominator is `n/a`."""

from __future__ import annotations

from dataclasses import dataclass

from benchrig.core.errors import counts_against_model
from benchrig.resultio.record import Record

# Each rate's name, as the CSV (`tool_use_<rate>`) and the JSON (`tool_use.<rate>`) give it
# (empty / null on a zero denominator), then the counts outside every rate.
TOOL_RATES = ("task_success", "selection", "arguments", "abstention", "false_calls",
              "structured")
TOOL_COUNTS = ("skipped_turns", "timeouts", "errors", "unsupported")


@dataclass(frozen=True)
class Rate:
    numerator: int
    denominator: int

    @property
    def value(self) -> float | None:
        """None on an empty denominator: `n/a`, never 0 %."""
        return self.numerator / self.denominator if self.denominator else None

    def text(self) -> str:
        if not self.denominator:
            return f"n/a ({self.numerator}/0)"
        return f"{self.value * 100:.1f}% ({self.numerator}/{self.denominator})" \
            if self.value is not None else "n/a"


@dataclass(frozen=True)
class ToolFigures:
    """A model's tool-use figures over its tool_use attempts."""

    task_success: Rate
    selection: Rate
    arguments: Rate
    abstention: Rate
    false_calls: Rate
    structured: Rate
    skipped_turns: int
    timeouts: int  # eligible: every planned turn of such an attempt failed
    errors: int  # not the model's doing: outside every rate
    unsupported: int  # the runtime or model cannot take tools: outside every rate


def _turn_kinds(result: Record) -> tuple[int, int]:
    """(call turns, answer turns) of an attempt without counts (a timeout), read from its
    check names (`turn N: call <tool>` / `turn N: answer`)."""
    names = result.checks.names
    return (sum(": call " in n for n in names), sum(n.endswith(": answer") for n in names))


def tool_figures(results: list[Record]) -> ToolFigures:
    total: dict[str, int] = {}
    eligible = [r for r in results if counts_against_model(r)]
    timeouts = 0
    for result in eligible:
        evidence = result.evidence or {}
        counts = (evidence.get("tool_use") or {}).get("counts")
        if not isinstance(counts, dict):  # a timeout: every planned turn failed
            timeouts += result.result == "error"
            calls, answers = _turn_kinds(result)
            counts = {"call_turns": calls, "answer_turns": answers}
        for key, value in counts.items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    calls, answers = total.get("call_turns", 0), total.get("answer_turns", 0)
    return ToolFigures(
        task_success=Rate(sum(r.result == "pass" for r in eligible), len(eligible)),
        selection=Rate(total.get("selection", 0), calls),
        arguments=Rate(total.get("arguments", 0), calls),
        abstention=Rate(total.get("abstention", 0), answers),
        false_calls=Rate(total.get("false_calls", 0), answers),
        structured=Rate(total.get("structured", 0), calls),
        skipped_turns=total.get("skipped_turns", 0),
        timeouts=timeouts,
        errors=sum(r.result == "error" and not counts_against_model(r) for r in results),
        unsupported=sum(r.result == "unsupported" for r in results),
    )


def tool_line(figures: ToolFigures, success_range: str = "") -> str:
    """Every rate with its numerator and denominator, then what stands outside them;
    `success_range`: the task success's range over the runs (` [low-high]`), if any."""
    f = figures
    return (f"task success {f.task_success.text()}{success_range} · "
            f"tool selection {f.selection.text()} · "
            f"arguments {f.arguments.text()} · abstention {f.abstention.text()} · "
            f"false calls {f.false_calls.text()} · structured calls {f.structured.text()} · "
            f"skipped turns {f.skipped_turns} · timeouts {f.timeouts} · errors {f.errors} · "
            f"unsupported {f.unsupported}")
