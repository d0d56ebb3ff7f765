"""`benchrig compare A B`: two models or configurations paired by task, per suite and
overall: the difference of their pass rates with its interval over tasks, the ratios of
TTFT and decode speed with theirs, unbiased pass@k for coding, and a plain verdict."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchrig.attempts import unit, without_retried_errors
from benchrig.core.errors import UsageError, counts_against_model
from benchrig.metrics import mean_known
from benchrig.report.crowding import crowded_ttft
from benchrig.report.facets import facet
from benchrig.report.render_json import estimate
from benchrig.report.select import settings_keys, variant_names
from benchrig.report.stats import (
    Estimate,
    TaskCount,
    mean_pass_at_k,
    paired_difference,
    ratio_of_means,
)
from benchrig.resultio.record import Record, as_records
from benchrig.textsafe import label

TaskKey = tuple[str, str]  # suite, task
OVERALL = "overall"
SELECTOR_HELP = ("a model name, a --label, or model@agent (e.g. smollm2@llamacpp)")


def matches(selector: str, result: Record) -> bool:
    """Whether a result belongs to a side named `selector` (SELECTOR_HELP)."""
    model, agent = result.model, result.agent
    return selector in (model, result.label, f"{model}@{agent}",
                        f"{model}@{result['driver']}")


SIDES_NAMED = 8  # model@agent sides a "no result matches" error names


def _sides_here(results: list[Record]) -> str:
    """The model@agent sides the results hold, for an error: what a user can compare when
    a bare agent name (`compare claude codex`) matched nothing."""
    sides = sorted({f"{r.model}@{r.agent}" for r in results})
    if not sides:
        return ""
    shown = ", ".join(label(side) for side in sides[:SIDES_NAMED])
    return f"; here: {shown}" + (", …" if len(sides) > SIDES_NAMED else "")


@dataclass(frozen=True)
class Side:
    """One side's results per task: counts, mean TTFT and decode speed of each task."""

    name: str
    attempts: int
    counts: dict[TaskKey, TaskCount]
    ttft_ms: dict[TaskKey, float]
    decode_tps: dict[TaskKey, float]
    settings: tuple[str, ...]  # the settings it pools, when more than one
    ttft_in_flight: int = 0  # TTFTs measured with other attempts in flight (crowding)


# What one side must hold to one value: a side that mixes them would pool unlike things.
ONE_PER_SIDE = (("model", "models"), ("driver", "drivers"), ("agent", "agents"),
                ("label", "labels"))


def _one_of_each(tag: str, name: str, results: list[Record]) -> None:
    """UsageError naming what side `tag` pools (models, drivers, agents or labels) and how
    to name one of them."""
    for field, plural in ONE_PER_SIDE:
        values = sorted({str(getattr(r, field) or "") for r in results})
        if len(values) < 2:
            continue
        shown = [label(v) if v else "(none)" for v in values]
        if field == "model":
            how = "name one model, or model@agent"
        elif field == "label":
            how = "name one of the labels" if all(values) else "name a label, or model@agent"
        else:
            model = label(str(results[0].model))
            how = "say " + " or ".join(f"{model}@{v}" for v in shown) + ", or a label"
        raise UsageError(f"{tag}={label(name)} pools {plural} {', '.join(shown[:-1])} and "
                         f"{shown[-1]}: {how}")


def _side(name: str, results: list[Record]) -> Side:
    per_task: dict[TaskKey, list[Record]] = {}
    for r in results:
        per_task.setdefault((r.suite, unit(r)), []).append(r)
    counts, ttft, decode = {}, {}, {}
    for key, group in per_task.items():
        scored = [r for r in group if counts_against_model(r)]
        counts[key] = (sum(r.result == "pass" for r in scored), len(scored))
        figures = [r.metrics for r in group]
        if (value := mean_known(f.get("ttft_ms") for f in figures)) is not None:
            ttft[key] = value
        if (value := mean_known(f.get("tokens_per_s") for f in figures)) is not None:
            decode[key] = value
    names = variant_names(settings_keys(results))
    pooled = tuple(sorted(n for n in names.values() if n)) if len(names) > 1 else ()
    return Side(name, len(results), counts, ttft, decode, pooled, crowded_ttft(results))


@dataclass(frozen=True)
class Row:
    """One suite (or `overall`) of the comparison."""

    suite: str
    tasks: int  # attempted by both sides
    rate_a: float | None  # the mean over tasks of each task's pass rate (those the
    rate_b: float | None  # difference is over: a verdict on both sides)
    difference: Estimate | None  # A − B
    ttft_ratio: Estimate | None  # A ÷ B
    decode_ratio: Estimate | None  # A ÷ B
    pass_at_k: tuple[dict[int, float], dict[int, float]] = ({}, {})


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    rows: list[Row]
    only_a: int  # tasks only one side attempted: left out of every figure
    only_b: int
    changed: int  # paired tasks whose file differs between the sides (task_hash)


def _task_mean(counts: Iterable[TaskCount]) -> float | None:
    return mean_known(c / n for c, n in counts)


def _row(suite: str, keys: list[TaskKey], a: Side, b: Side) -> Row:
    pairs = [(a.counts[k], b.counts[k]) for k in keys]
    decided = [(x, y) for x, y in pairs if x[1] and y[1]]
    coding = facet(suite).pass_at_k  # coding: its tasks' pass@k beside the rates
    return Row(
        suite=suite, tasks=len(keys),
        rate_a=_task_mean(p[0] for p in decided), rate_b=_task_mean(p[1] for p in decided),
        difference=paired_difference(pairs),
        ttft_ratio=ratio_of_means([(a.ttft_ms[k], b.ttft_ms[k]) for k in keys
                                   if k in a.ttft_ms and k in b.ttft_ms]),
        decode_ratio=ratio_of_means([(a.decode_tps[k], b.decode_tps[k]) for k in keys
                                     if k in a.decode_tps and k in b.decode_tps]),
        pass_at_k=(mean_pass_at_k([p[0] for p in decided]),
                   mean_pass_at_k([p[1] for p in decided])) if coding else ({}, {}),
    )


def compare(given: Sequence[Mapping[str, Any]], a: str, b: str) -> Comparison:
    """Sides `a` and `b` (SELECTOR_HELP) of `results`, paired by task; UsageError when a side
    has no results, pools models, drivers, agents or labels, a result belongs to both, or
    the sides share no task."""
    results = without_retried_errors(as_records(given))
    side_a = [r for r in results if matches(a, r)]
    side_b = [r for r in results if matches(b, r)]
    for name, side in ((a, side_a), (b, side_b)):
        if not side:
            raise UsageError(f"no result matches {name!r} ({SELECTOR_HELP})"
                             + _sides_here(results))
    both = {id(r) for r in side_a} & {id(r) for r in side_b}
    if both:
        raise UsageError(f"{len(both)} results match both {a!r} and {b!r}: name the sides "
                         "apart (model@agent, or a --label)")
    _one_of_each("A", a, side_a)
    _one_of_each("B", b, side_b)
    one, two = _side(a, side_a), _side(b, side_b)
    paired = sorted(set(one.counts) & set(two.counts),
                    key=lambda k: (facet(k[0]).order, k))
    if not paired:  # nothing to pair: an empty comparison would read as "no difference"
        raise UsageError(f"A={label(a)} ({len(one.counts)} tasks) and B={label(b)} "
                         f"({len(two.counts)} tasks) share no task: nothing to compare")
    hashes: dict[tuple[int, TaskKey], set[str]] = {}
    for index, side in enumerate((side_a, side_b)):
        for r in side:
            hashes.setdefault((index, (r.suite, unit(r))), set()).add(r.task_hash)
    changed = sum(hashes[(0, k)] != hashes[(1, k)] for k in paired)
    suites = list(dict.fromkeys(k[0] for k in paired))
    rows = [_row(s, [k for k in paired if k[0] == s], one, two) for s in suites]
    if len(suites) > 1:
        rows.append(_row(OVERALL, paired, one, two))
    return Comparison(one, two, rows, len(set(one.counts) - set(two.counts)),
                      len(set(two.counts) - set(one.counts)), changed)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _points(value: float) -> str:
    return f"{value * 100:+.1f}"


def _verdict(found: Estimate, better: str, worse: str) -> str:
    if found.low is None:
        return "too few tasks to tell"
    if not found.significant:
        return "not significant"
    return f"{better} better" if (found.value > found.null) else f"{worse} better"


def _method(found: Estimate) -> str:
    extra = [f"n={found.n} tasks"]
    if found.p_value is not None:
        extra.append(f"p={found.p_value:.3g}")
    if found.seed is not None:
        extra.append(f"{found.resamples} resamples, seed {found.seed}")
    return f"{found.method} ({', '.join(extra)})"


def _difference(row: Row) -> str:
    d = row.difference
    if d is None:
        return f"  {row.suite}: no verdicts to compare ({row.tasks} tasks)"
    return (f"  {row.suite}: A {_pct(row.rate_a)} vs B {_pct(row.rate_b)}; A − B "
            f"{_points(d.value)} points {_interval(d, _points)} → {_verdict(d, 'A', 'B')}; "
            f"{_method(d)}")


def _interval(found: Estimate, shown: Callable[[float], str]) -> str:
    if found.low is None or found.high is None:
        return "[no interval]"
    return f"[{shown(found.low)}, {shown(found.high)}]"


def _ratio(name: str, found: Estimate | None, faster_when_higher: bool) -> str:
    if found is None:
        return f"    {name} A ÷ B: —"
    verdict = "too few tasks to tell" if found.low is None else "not significant"
    if found.significant:
        higher = found.value > 1
        verdict = f"{'A' if higher == faster_when_higher else 'B'} faster"
    return (f"    {name} A ÷ B: {found.value:.2f}× {_interval(found, '{:.2f}'.format)} → "
            f"{verdict}; {_method(found)}")


def _pass_at_k(row: Row) -> list[str]:
    a, b = row.pass_at_k
    if not a:
        return []
    cells = "  ".join(f"pass@{k} A {_pct(a[k])} B {_pct(b.get(k))}" for k in a if k in b)
    return [f"    {cells} (unbiased estimator over the samples of each task)"] if cells else []


def _side_line(tag: str, side: Side) -> str:
    text = f"{tag} = {label(side.name)}: {side.attempts} results, {len(side.counts)} tasks"
    if side.settings:
        text += f" (pools {len(side.settings)} settings: {label('; '.join(side.settings))})"
    return text


def render_text(c: Comparison) -> str:
    lines = [_side_line("A", c.a), _side_line("B", c.b), "", "pass rate (paired by task):"]
    for row in c.rows:
        lines.append(_difference(row))
        lines += _pass_at_k(row)
        lines.append(_ratio("TTFT", row.ttft_ratio, faster_when_higher=False))
        lines.append(_ratio("decode", row.decode_ratio, faster_when_higher=True))
    notes = ["pass rate: each task's passes ÷ attempts that reached a verdict, averaged over "
             "the tasks with a verdict on both sides; intervals are 95 % and over tasks"]
    if c.only_a or c.only_b:
        notes.append(f"left out: {c.only_a} tasks only A ran, {c.only_b} only B ran")
    queued = [f"{n} of {tag}'s" for tag, n in (("A", c.a.ttft_in_flight),
                                                 ("B", c.b.ttft_in_flight)) if n]
    if queued:
        notes.append(f"⚠ {' and '.join(queued)} TTFTs were measured with other attempts in "
                     "flight (settings.in_flight > 1): they include a queue, so the TTFT "
                     "ratio compares load as much as models")
    if c.changed:
        notes.append(f"⚠ {c.changed} paired tasks were run from different task files "
                     "(task_hash differs between the sides)")
    return "\n".join([*lines, "", *notes]) + "\n"


def _side_json(side: Side) -> dict[str, Any]:
    return {"name": side.name, "results": side.attempts, "tasks": len(side.counts),
            "pooled_settings": list(side.settings), "ttft_in_flight": side.ttft_in_flight}


def render_json(c: Comparison) -> str:
    return json.dumps(as_json(c), indent=2, allow_nan=False) + "\n"


def as_json(c: Comparison) -> dict[str, Any]:
    """The comparison as `compare --format json` writes it."""
    rows = [{"suite": r.suite, "tasks": r.tasks, "pass_rate_a": r.rate_a,
             "pass_rate_b": r.rate_b, "difference": estimate(r.difference),
             "significant": None if r.difference is None else r.difference.significant,
             "ttft_ratio": estimate(r.ttft_ratio), "decode_ratio": estimate(r.decode_ratio),
             "pass_at_k_a": {str(k): v for k, v in r.pass_at_k[0].items()},
             "pass_at_k_b": {str(k): v for k, v in r.pass_at_k[1].items()}} for r in c.rows]
    return {"a": _side_json(c.a), "b": _side_json(c.b), "suites": rows,
            "only_a": c.only_a, "only_b": c.only_b, "changed_tasks": c.changed}
