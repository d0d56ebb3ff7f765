"""A (model, agent) group → its scorecard: per suite, pass rates with their range over the runs, the
coding task and assertion levels, speed figures, TTFT, truncation, and the composite score.

Runs: the k-th attempt of a task (by run index, then start time) belongs to run k, so
`--runs 3` gives three runs whether it ran in one command or three, and an attempt run
again by `--retry-errors` stays in its run. A suite's interval is the range
(min–max) of its per-run rates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchrig.attempts import run_order, unit
from benchrig.core.errors import counts_against_model
from benchrig.metrics import any_floored, mean_known
from benchrig.report.cards import Span as Span
from benchrig.report.cards import SpeedFigures as SpeedFigures
from benchrig.report.cards import SuiteCard as SuiteCard
from benchrig.report.crowding import crowded_ttft
from benchrig.report.facets import facet, figure_values
from benchrig.report.grouping import Group, mean_figure
from benchrig.report.panel import panel
from benchrig.report.stats import pass_at_k
from benchrig.resultio.record import Record, as_records
from benchrig.textsafe import label


@dataclass(frozen=True)
class ModelCard:
    """Every suite of one model as driven by one agent or runtime, and the composite."""

    model: str
    agent: str
    suites: dict[str, SuiteCard]
    composite: float | None
    composite_span: Span | None
    composite_suites: tuple[str, ...]
    avg_ttft_s: float | None
    truncated: int
    ttft_in_flight: int = 0  # TTFTs in avg_ttft_s measured with others in flight
    packs: Mapping[str, str] = field(default_factory=dict)  # pack task id → pack name

    def line(self, result: Record) -> str:
        """The key of `suites` a result is counted under: its pack's name for a task of an
        imported pack, else its suite (printable, as the keys are)."""
        return label(self.packs.get(str(result.task)) or result.suite)


def line_of(result: Record, packs: Mapping[str, str]) -> str:
    """A result's scorecard line, unprinted: its pack's name or its suite."""
    return packs.get(str(result.task)) or str(result.suite)


def pack_pass_at(results: list[Record]) -> tuple[dict[int, float], int]:
    """pass@k over a pack's problems (k = 1, and the fewest counted attempts of a problem
    when more), from the attempts that count against the model; and how many problems."""
    counts: dict[str, list[int]] = {}
    for r in _scored(results):
        found = counts.setdefault(unit(r), [0, 0])
        found[0] += 1
        found[1] += r.result == "pass"
    if not counts:
        return {}, 0
    runs = min(n for n, _ in counts.values())
    return ({k: sum(pass_at_k(n, c, k) for n, c in counts.values()) / len(counts)
             for k in sorted({1, runs})}, len(counts))


def _ttft_s(result: Record) -> float | None:
    ttft = result.metrics.get("ttft_ms")
    return None if ttft is None else ttft / 1000.0


def _numbered(result: Record) -> bool:
    run = result.run_index
    return isinstance(run, int) and not isinstance(run, bool)


def _numbered_order(result: Record) -> tuple[Any, str, str]:
    return result.run_index, result.started_at, result.run_id


def by_run(results: Iterable[Mapping[str, Any]]) -> list[list[Record]]:
    """Attempts grouped into runs: the k-th attempt of each task (by run index, then start
    time: attempts.run_order) → run k. A task whose results all carry their run index (every
    result since it was written) is sorted by it directly: the order run_order gives them,
    without its attempt table (a summary orders 100,000 results this way, many times)."""
    per_task: dict[str, list[Record]] = {}
    for result in as_records(results):
        per_task.setdefault(unit(result), []).append(result)
    runs: list[list[Record]] = []
    for attempts in per_task.values():
        ordered = (sorted(attempts, key=_numbered_order) if all(map(_numbered, attempts))
                   else run_order(attempts))
        for index, result in enumerate(ordered):
            if index == len(runs):
                runs.append([])
            runs[index].append(result)
    return runs


def _span(runs: list[list[Record]], figure: Callable[[list[Record]], float | None],
          ) -> Span | None:
    values = [v for v in (figure(run) for run in runs) if v is not None]
    return Span(min(values), max(values), len(values)) if values else None


def _scored(results: list[Record]) -> list[Record]:
    """The attempts a rate is over: verdicts and the model's own errors (errors.py)."""
    return [r for r in results if counts_against_model(r)]


def _rate(results: list[Record]) -> float | None:
    return _passed_share(_scored(results))


def _passed_share(scored: list[Record]) -> float | None:
    """The pass rate of attempts already scored (_scored): a card finds them once."""
    return sum(r.result == "pass" for r in scored) / len(scored) if scored else None


def checks_of(result: Record) -> tuple[int, int]:
    """(checks passed, checks counted) of a scored attempt: its suite's own units (context by
    window, the windows failed by infra or harness left out: Panel.units); else its checks."""
    units = panel(result.suite).units(result)
    return units if units is not None else (result.checks.passed, result.checks.total)


def _checks(scored: list[Record]) -> tuple[int, int]:
    """(checks passed, checks counted) over attempts already scored (_scored)."""
    counted = [checks_of(r) for r in scored]
    return sum(c[0] for c in counted), sum(c[1] for c in counted)


def _checks_rate(results: list[Record]) -> float | None:
    return _checks_share(_scored(results))


def _checks_share(scored: list[Record]) -> float | None:
    passed, total = _checks(scored)
    return passed / total if total else None


def _decode(results: list[Record]) -> float | None:
    return mean_figure(results, "tokens_per_s")


def _token_sum(results: list[Record], key: str) -> int | None:
    values: list[Any] = [r.metrics.get(key) for r in results]
    return None if not values or any(v is None for v in values) else sum(values)


def _finishes(results: list[Record]) -> dict[str, int]:
    """How many stopped for each reason, as shown (label): each distinct reason labelled once."""
    texts = Counter(r.finish_reason for r in results if isinstance(r.finish_reason, str))
    shown = Counter(label(r.finish_reason) for r in results  # a caller's odd value: as before
                    if r.finish_reason is not None and not isinstance(r.finish_reason, str))
    for reason, count in texts.items():
        shown[label(reason)] += count
    return dict(sorted(shown.items()))


def _floored(results: list[Record]) -> bool:
    return any_floored(r.metrics for r in results)


def speed_figures(results: list[Record]) -> tuple[SpeedFigures, ...]:
    """Per speed task: a short prompt and a sustained generation measure different things."""
    tasks: dict[str, list[Record]] = {}
    for result in results:
        tasks.setdefault(result.task, []).append(result)
    return tuple(SpeedFigures(
        task=label(task),
        decode_tps=_decode(group),
        decode_floored=_floored(group),
        decode_span=_span(by_run(group), _decode),
        prefill_tps=mean_figure(group, "prefill_tokens_per_s"),
        avg_ttft_s=mean_known(_ttft_s(r) for r in group),
        output_tokens=mean_figure(group, "output_tokens"),
        finish_reasons=_finishes(group),
        ttft_in_flight=crowded_ttft(group),
    ) for task, group in sorted(tasks.items()))


def all_greedy(results: list[Record], runs: int) -> bool:
    """Two runs or more, and every attempt that reached a verdict was sent temperature 0:
    greedy decoding repeats one generation, so the runs are not samples (a range shows no
    sampling variance). Unknown temperatures (agents, replay) are never called greedy."""
    decided = [r for r in results if r.result != "error"]
    return runs >= 2 and bool(decided) and all(
        r.settings.get("temperature") == 0 for r in decided)


def suite_card(suite: str, given: Sequence[Mapping[str, Any]],
               runs: list[list[Record]] | None = None, pack: bool = False) -> SuiteCard:
    """`runs`: by_run(results), when the caller has it already; `pack`: `suite` is an
    imported pack's name, its line scored by pass@k (out of the composite)."""
    results = as_records(given)
    runs = by_run(results) if runs is None else runs
    pass_at, problems = pack_pass_at(results) if pack else (None, 0)
    scored = _scored(results)
    scored_runs = [_scored(run) for run in runs]  # each run's, once for both its rates
    checks_passed, checks_total = _checks(scored)
    shown = facet(suite)
    card = SuiteCard(
        suite=label(suite),
        runs=len(runs),
        passed=sum(r.result == "pass" for r in scored),
        scored=len(scored),
        errors=sum(r.result == "error" and not counts_against_model(r) for r in results),
        checks_passed=checks_passed,
        checks_total=checks_total,
        truncated=sum(bool(r.truncated) for r in results),
        truncated_thinking=sum(bool(r.truncated_thinking) for r in results),
        avg_ttft_s=mean_known(_ttft_s(r) for r in results),
        rate_span=_span(scored_runs, _passed_share),
        checks_span=_span(scored_runs, _checks_share),
        thinking_tokens=_token_sum(results, "thinking_tokens"),
        output_tokens=_token_sum(results, "output_tokens"),
        decode_tps=_decode(results),
        decode_floored=_floored(results),
        prefill_tps=mean_figure(results, "prefill_tokens_per_s"),
        finish_reasons=_finishes(results),
        max_checks=max((r.checks.total for r in results), default=0),
        avg_output_tokens=mean_figure(results, "output_tokens"),
        deterministic=all_greedy(results, len(runs)),
        ttft_in_flight=crowded_ttft(results),
        pass_at=pass_at,
        problems=problems,
        facet=shown,
        figures=figure_values(suite, results),
    )
    return panel(suite).extend(card, results)  # its own figures: speed per task, tool rates…


def _composite_span(results: list[Record], suites: tuple[str, ...],
                    known: dict[str, list[list[Record]]]) -> Span | None:
    """Composite of each run (mean of that run's suite scores), then their range. `known`:
    the runs of each suite already grouped."""
    per_suite = {s: known[s] if s in known else by_run([r for r in results if r.suite == s])
                 for s in suites}
    count = max((len(runs) for runs in per_suite.values()), default=0)
    values = []
    for k in range(count):
        scores = [(_checks_rate if facet(s).by_checks else _rate)(runs[k])
                  for s, runs in per_suite.items() if k < len(runs)]
        mean = mean_known(scores)
        if mean is not None:
            values.append(mean)
    return Span(min(values), max(values), len(values)) if values else None


def model_card(model: str, agent: str, results: list[Record],
               packs: Mapping[str, str] | None = None) -> ModelCard:
    """`packs`: each imported pack's task id → its name; those tasks make their pack's own
    line, out of their suite's (a HumanEval attempt is not a bundled coding task)."""
    packs = packs or {}
    grouped: dict[str, list[Record]] = {}
    for result in results:
        grouped.setdefault(line_of(result, packs), []).append(result)
    runs = {s: by_run(group) for s, group in grouped.items()}  # once per line
    pack_names = set(packs.values())
    suites = {label(s): suite_card(s, grouped[s], runs[s], s in pack_names)
              for s in sorted(grouped, key=lambda s: (s in pack_names, facet(s).order, s))}
    scoring = tuple(s for s, card in suites.items() if card.score is not None)
    timed = [r for r in results if facet(r.suite).timed]  # the legacy timing averages
    return ModelCard(
        model=label(model),
        agent=label(agent),
        suites=suites,
        composite=mean_known(suites[s].score for s in scoring),
        composite_span=_composite_span(results, scoring, runs),
        composite_suites=scoring,
        avg_ttft_s=mean_known(_ttft_s(r) for r in timed),
        truncated=sum(card.truncated for card in suites.values()),
        ttft_in_flight=crowded_ttft(timed),
        packs=packs,
    )


def scorecards(groups: list[Group], packs: Mapping[str, str] | None = None
               ) -> list[ModelCard]:
    """One card per (model, agent) group, in the groups' order (that of the per-model table);
    `packs`: as model_card takes it."""
    return [model_card(g.name, g.agent, g.results, packs) for g in groups]
