"""The context suite's figures per window, from each result's `evidence.context.steps`: what the
scorecard's per-step table, the spill point and the CSV columns show."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from benchrig.core.errors import counts_against_model
from benchrig.jsonsafe import finite
from benchrig.metrics import mean_known
from benchrig.resultio.record import Record
from benchrig.textsafe import label

MIB = 1024 * 1024


@dataclass(frozen=True)
class StepFigures:
    """One window of one scenario over its attempts (means of the known values)."""

    task: str
    window: int
    attempts: int
    passed: int
    errors: int  # steps failed by infra or harness: beside the retrieval, never in it
    prompt_tokens_target: float | None
    prompt_tokens_actual: float | None
    ttft_s: float | None
    prefill_tps: float | None  # the engine's counters
    prefill_client_tps: float | None  # prompt tokens ÷ TTFT, as the client saw it
    decode_tps: float | None
    load_time_s: float | None
    rss_growth_mib: float | None
    kv_cache_mib: float | None
    size_mib: float | None
    size_vram_mib: float | None
    placement: str | None  # gpu, split, cpu, "mixed", or None (unknown)
    fill_method: str | None

    @property
    def decided(self) -> int:
        """The steps that reached a verdict (found, missed, or the model's own error)."""
        return self.attempts - self.errors

    @property
    def retrieval(self) -> float | None:
        return self.passed / self.decided if self.decided else None


@dataclass(frozen=True)
class ContextFigures:
    steps: tuple[StepFigures, ...]
    spill: str  # the spill point in words (a window, none, or n/a and why)
    load_time_s: float | None


def _steps(result: Record) -> list[dict[str, Any]]:
    context = (result.evidence or {}).get("context")
    steps = context.get("steps") if isinstance(context, dict) else None
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _uncounted(record: dict[str, Any]) -> bool:
    """A step whose error is not the model's doing (infra, harness): no verdict."""
    error = record.get("error")
    # the attempt's rule (errors.ERROR_KINDS), read for one step
    return isinstance(error, dict) and not counts_against_model(
        {"result": "error", "error": error})


def window_counts(result: Record) -> tuple[int, int]:
    """(windows found, windows that reached a verdict) of one context attempt: the one
    context figure every view counts (context_retrieval_pct). An attempt or step failed by
    infra or harness counts in neither; without step records, the attempt's checks."""
    if not counts_against_model(result):
        return 0, 0
    steps = _steps(result)
    if not steps:
        return int(result.checks.passed), int(result.checks.total)
    decided = [s for s in steps if not _uncounted(s)]
    return sum(s.get("passed") is True for s in decided), len(decided)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return finite(value)


def _mean(records: Iterable[dict[str, Any]], key: str, scale: float = 1.0) -> float | None:
    values = [_number(r.get(key)) for r in records]
    mean = mean_known(values)
    return None if mean is None else mean / scale


def _memory(records: list[dict[str, Any]], key: str) -> float | None:
    return _mean((r.get("memory") or {} for r in records), key, MIB)


def _one(values: Iterable[Any]) -> str | None:
    found = {str(v) for v in values if v is not None}
    if not found:
        return None
    return label(found.pop()) if len(found) == 1 else "mixed"


def step_figures(task: str, window: int, records: list[dict[str, Any]]) -> StepFigures:
    ttft = _mean(records, "ttft_ms")
    return StepFigures(
        task=label(task), window=window, attempts=len(records),
        passed=sum(r.get("passed") is True and not _uncounted(r) for r in records),
        errors=sum(_uncounted(r) for r in records),
        prompt_tokens_target=_mean(records, "prompt_tokens_target"),
        prompt_tokens_actual=_mean(records, "prompt_tokens_actual"),
        ttft_s=None if ttft is None else ttft / 1000,
        prefill_tps=_mean(records, "prefill_tokens_per_s"),
        prefill_client_tps=_mean(records, "prefill_tokens_per_s_client"),
        decode_tps=_mean(records, "tokens_per_s"),
        load_time_s=_mean(records, "load_time_s"),
        rss_growth_mib=_memory(records, "rss_growth_bytes"),
        kv_cache_mib=_memory(records, "kv_cache_bytes"),
        size_mib=_memory(records, "size_bytes"),
        size_vram_mib=_memory(records, "size_vram_bytes"),
        placement=_one((r.get("memory") or {}).get("placement") for r in records),
        fill_method=_one(r.get("fill_method") for r in records))


def spill_text(results: list[Record]) -> str:
    """The spill point over the attempts: one window, or the windows each run found."""
    found = []
    for result in results:
        context = (result.evidence or {}).get("context")
        if isinstance(context, dict):
            point, note = context.get("spill_point"), context.get("spill_note")
            found.append(str(point) if isinstance(point, int) else label(str(note)))
    counts = Counter(found)
    if not counts:
        return "n/a: no step recorded"
    if len(counts) == 1:
        return next(iter(counts))
    return "varies: " + ", ".join(f"{k} ({v}×)" for k, v in sorted(counts.items()))


def context_figures(results: list[Record]) -> ContextFigures:
    """Per (scenario, window), in the scenario's order of windows; an attempt failed by
    infra or harness is left out (its steps say nothing of the model)."""
    results = [r for r in results if counts_against_model(r)]
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for result in results:
        for record in _steps(result):
            window = record.get("window")
            if isinstance(window, int) and not isinstance(window, bool):
                grouped.setdefault((str(result.task), window), []).append(record)
    steps = tuple(step_figures(task, window, records)
                  for (task, window), records in sorted(grouped.items()))
    loads = [s.load_time_s for s in steps]
    return ContextFigures(steps, spill_text(results), mean_known(loads))


def mib(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} MiB"


def memory_text(step: StepFigures) -> str:
    """What memory a window took, as the runtime reported it."""
    parts = []
    if step.rss_growth_mib is not None:
        parts.append(f"RSS {step.rss_growth_mib:+.1f} MiB")
    if step.kv_cache_mib is not None:
        parts.append(f"KV {mib(step.kv_cache_mib)}")
    if step.size_mib is not None:
        parts.append(f"size {mib(step.size_mib)}, VRAM {mib(step.size_vram_mib)}")
    return ", ".join(parts) or "—"


def windows(figures: Iterable[ContextFigures]) -> list[int]:
    """Every window any scenario ran, ascending."""
    return sorted({s.window for f in figures for s in f.steps})


STEP_COLUMNS = ("prompt_tokens_actual", "ttft_sec", "prompt_eval_tok_sec", "eval_tok_sec",
                "load_time_sec", "rss_growth_mib", "kv_cache_mib", "size_vram_mib", "placement",
                "retrieval_rate")


def step_columns(found: list[int]) -> list[str]:
    """The CSV columns of each window: `context_<window>_<figure>`."""
    return [f"context_{w}_{c}" for w in found for c in STEP_COLUMNS]


def step_values(figures: ContextFigures | None, found: list[int]) -> dict[str, str]:
    """One model's per-window CSV cells (scenarios sharing a window are pooled)."""
    cells: dict[str, str] = {}
    if figures is None:
        return cells
    for window in found:
        same = [s for s in figures.steps if s.window == window]
        if not same:
            continue
        decided = sum(s.decided for s in same)

        def pooled(name: str, steps: list[StepFigures] = same) -> float | None:
            return mean_known(getattr(s, name) for s in steps)

        values = [pooled("prompt_tokens_actual"), pooled("ttft_s"), pooled("prefill_tps"),
                  pooled("decode_tps"), pooled("load_time_s"), pooled("rss_growth_mib"),
                  pooled("kv_cache_mib"), pooled("size_vram_mib")]
        text = ["" if v is None else f"{v:.3f}" for v in values]
        text.append(_one(s.placement for s in same) or "")
        passed = sum(s.passed for s in same)
        text.append(f"{passed / decided:.4f}" if decided else "")  # 0-1, as every CSV rate
        cells |= dict(zip([f"context_{window}_{c}" for c in STEP_COLUMNS], text, strict=True))
    return cells
