"""One attempt of a context scenario: each step (a context window) warmed up, filled to its
token target, timed, judged and measured. A step the engine fails is that step's recorded
failure; the next step still runs."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from benchrig.checks.guard import CheckTimeout
from benchrig.checks.judge import judge
from benchrig.core.check import CheckContext
from benchrig.core.deadline import Deadline
from benchrig.core.errors import ERROR_KINDS, DriverError
from benchrig.core.measurements import Metrics
from benchrig.core.messages import Message
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.core.verdict import CheckDetail, Verdict
from benchrig.drivers.base import Driver, DriverRequest
from benchrig.haystack import (
    EXPECTED_KEY,
    Scenario,
    TokenCounter,
    build_prompt,
    draw_codes,
    estimate_counter,
)
from benchrig.metrics import mean_known
from benchrig.textsafe import printable, stored, type_name

WARMUP: tuple[Message, ...] = ({"role": "user", "content": "Reply with OK."},)
EXCERPT_CHARS = 200
NO_RELOAD = "the runtime keeps its window when a request changes it: nothing to reload"


@dataclass(frozen=True)
class Step:
    """One step as it ran: its record for the result, its output, its check."""

    record: dict[str, Any]
    output: DriverOutput | None
    detail: CheckDetail
    error: DriverError | None
    prompt: str


def counter_for(driver: Driver, request: DriverRequest) -> TokenCounter:
    """The driver's tokenizer where it has one (`token_counter`), else the estimate."""
    make = getattr(driver, "token_counter", None)
    found = make(request) if callable(make) else None
    return found if isinstance(found, TokenCounter) else estimate_counter()


def _error(exc: BaseException, phase: str | None, driver: Driver) -> DriverError:
    if isinstance(exc, DriverError):
        if exc.phase is None:
            exc.phase = phase
        return exc
    return DriverError("harness", f"the {driver.name} driver failed: {type_name(exc)}: "
                       f"{printable(str(exc))}", phase=phase)


def _warm_up(driver: Driver, request: DriverRequest) -> dict[str, Any]:
    """The untimed request at the step's window, where a runtime reloads the model for a
    new window; its load time is the step's `load_time_s`. Raises DriverError."""
    if not getattr(driver, "reloads_on_context_change", False):
        return {"ran": False, "reason": NO_RELOAD, "load_time_s": None, "wall_s": None}
    request.progress.phase(f"window {request.settings.context_size}: warm-up (untimed)")
    began = time.perf_counter()
    output = driver.run(replace(request, messages=WARMUP,
                                settings=replace(request.settings, max_tokens=1)))
    return {"ran": True, "reason": None, "load_time_s": output.metrics.load_time_s,
            "wall_s": round(time.perf_counter() - began, 6)}


def memory_of(engine: dict[str, Any] | None) -> dict[str, Any]:
    """A step's memory figures from what the runtime reported: the embedded model's (or
    `benchrig serve`'s) resident set and KV cache, Ollama's /api/ps; else null, with why."""
    engine = engine or {}
    served = engine.get("server_perf")
    candidates = (engine.get("memory"), served.get("memory") if isinstance(served, dict)
                  else None)
    found = next((c for c in candidates if isinstance(c, dict)), None)
    figures: dict[str, Any] = dict.fromkeys(
        ("rss_before_bytes", "rss_after_bytes", "rss_growth_bytes", "kv_cache_bytes",
         "size_bytes", "size_vram_bytes", "placement", "source", "reason"))
    if found is not None:
        before, after = found.get("rss_before_bytes"), found.get("rss_after_bytes")
        figures.update(rss_before_bytes=before, rss_after_bytes=after,
                       kv_cache_bytes=found.get("kv_cache_bytes"),
                       placement=found.get("placement"), source=found.get("source"))
        if isinstance(before, int) and isinstance(after, int):
            figures["rss_growth_bytes"] = after - before
        return figures
    ps = engine.get("ps")
    if isinstance(ps, dict):
        figures.update(size_bytes=ps.get("size"), size_vram_bytes=ps.get("size_vram"),
                       placement=engine.get("placement"), source="ollama /api/ps")
        return figures
    figures["reason"] = ("the runtime reports no memory figures" if engine
                         else "the step ended before the runtime reported anything")
    return figures


def _figures(output: DriverOutput | None) -> dict[str, Any]:
    m = output.metrics if output is not None else Metrics()
    actual = m.input_tokens
    ttft = m.ttft_ms
    client = (actual / (ttft / 1000) if actual is not None and ttft else None)
    t = output.transcript if output is not None else None
    effective = dict(output.effective) if output is not None else {}
    return {"prompt_tokens_actual": actual, "prompt_tokens_source": m.input_tokens_source,
            "context_size": effective.get("context_size"), "ttft_ms": ttft,
            "answer_ttft_ms": m.answer_ttft_ms, "wall_s": m.wall_s,
            "prefill_tokens_per_s": m.prefill_tokens_per_s,
            "prefill_tokens_per_s_client": round(client, 3) if client else None,
            "tokens_per_s": m.tokens_per_s, "output_tokens": m.output_tokens,
            "finish_reason": t.finish_reason if t else None,
            "memory": memory_of(m.engine if output is not None else None),
            "answer_excerpt": stored(t.answer[-EXCERPT_CHARS:]) if t else ""}


def run_step(task: TaskSpec, driver: Driver, base: DriverRequest, scenario: Scenario,
             window: int, code: int) -> Step:
    """One window: warm-up, prompt, timed request, check. Never raises for the engine."""
    settings = replace(base.settings, context_size=window, context_size_source="context step")
    expected = scenario.expected.replace("{code}", str(code))
    request = replace(base, settings=settings, deadline=Deadline(settings.timeout_s))
    record: dict[str, Any] = {"window": window, "code": code, "expected": expected}
    prompt_text, output, error = "", None, None
    try:
        record["warmup"] = _warm_up(driver, request)
        record["load_time_s"] = record["warmup"]["load_time_s"]
        began = time.perf_counter()
        counter = counter_for(driver, request)
        prompt = build_prompt(scenario, window, code, counter)
        record.update(prompt_tokens_target=prompt.target_tokens,
                      prompt_tokens_counted=prompt.counted_tokens, fill_method=counter.method,
                      fill_detail=counter.detail, fill_whole_prompt=counter.whole_prompt,
                      fill_counts=prompt.counts, filler_words=prompt.filler_words,
                      needle_depth_actual=prompt.depth,
                      own_overhead_ms=round((time.perf_counter() - began) * 1000, 3))
        prompt_text = prompt.text
        request.progress.phase(f"window {window}: {prompt.counted_tokens} tokens")
        output = driver.run(replace(request, messages=({"role": "user", "content": prompt_text},
                                                       )))
    except Exception as exc:  # the engine's failure (or a driver bug) is this step's result
        error = _error(exc, request.deadline.phase, driver)
        output = error.partial
    record.setdefault("warmup", None)
    record.setdefault("load_time_s", None)
    for key in ("prompt_tokens_target", "prompt_tokens_counted", "fill_method", "fill_detail",
                "fill_whole_prompt", "fill_counts", "filler_words", "needle_depth_actual",
                "own_overhead_ms"):
        record.setdefault(key, None)
    record.update(_figures(output))
    if error is not None:
        detail = CheckDetail(f"window {window}", False, f"{error.kind}: {error.message}", 0.0)
    else:
        assert output is not None
        step_task = replace(task, check=MappingProxyType({**task.check,
                                                          EXPECTED_KEY: expected}))
        try:
            verdict = judge(step_task, output.transcript, settings,
                            CheckContext(request.deadline, None))
        except CheckTimeout as exc:  # the model's doing, as a driver's timeout would be
            error = DriverError("timeout", str(exc), phase="checking")
            verdict = Verdict("fail", notes=f"timeout: {error.message}")
        except Exception as exc:  # BenchRig is broken: this window's record says so
            error = DriverError("harness", f"checking failed: {type_name(exc)}: "
                                f"{printable(str(exc))}", phase="checking")
            verdict = Verdict("fail", notes=f"harness: {error.message}")
        detail = CheckDetail(f"window {window}", verdict.result == "pass", verdict.notes, 0.0)
    record.update(passed=detail.passed, message=detail.message,
                  error=None if error is None else {"kind": error.kind,
                                                    "message": error.message,
                                                    "phase": error.phase})
    return Step(record, output, detail, error, prompt_text)


def spill_point(records: Sequence[dict[str, Any]]) -> tuple[int | None, str]:
    """The first window whose placement is no longer all GPU, and what that rests on:
    n/a where no step's placement is known, or none ran on the GPU (CPU only)."""
    placed = [(r["window"], r["memory"]["placement"]) for r in records
              if r["memory"]["placement"] is not None]
    if not placed:
        return None, "n/a: placement unknown"
    if all(p == "cpu" for _, p in placed):
        return None, "n/a: CPU only"
    spilled = next((w for w, p in placed if p != "gpu"), None)
    if spilled is None:
        return None, "none: every step all on the GPU"
    return spilled, f"the KV cache left GPU memory at window {spilled}"


def _sum(values: Sequence[float | int | None]) -> Any:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _combined(steps: Sequence[Step]) -> DriverOutput | None:
    """The attempt's output: every step's answer, the figures summed or averaged (the
    result's ttft_ms is the mean over windows of different sizes: compare per step)."""
    outputs = [s.output for s in steps if s.output is not None]
    if not outputs:
        return None
    ms = [o.metrics for o in outputs]
    sources = {m.input_tokens_source for m in ms if m.input_tokens_source}
    out_sources = {m.output_tokens_source for m in ms if m.output_tokens_source}
    metrics = Metrics(
        wall_s=_sum([m.wall_s for m in ms]), ttft_ms=mean_known(m.ttft_ms for m in ms),
        answer_ttft_ms=mean_known(m.answer_ttft_ms for m in ms),
        tokens_per_s=mean_known(m.tokens_per_s for m in ms),
        tokens_per_s_floored=any(m.tokens_per_s_floored for m in ms),
        prefill_tokens_per_s=mean_known(m.prefill_tokens_per_s for m in ms),
        input_tokens=_sum([m.input_tokens for m in ms]),
        output_tokens=_sum([m.output_tokens for m in ms]),
        input_tokens_source=sources.pop() if len(sources) == 1 else None,
        output_tokens_source=out_sources.pop() if len(out_sources) == 1 else None,
        thinking_chars=_sum([m.thinking_chars for m in ms]),
        cost_usd=_sum([m.cost_usd for m in ms]), cost_source=ms[-1].cost_source,
        load_time_s=_sum([s.record["load_time_s"] for s in steps]),
        engine={"source": "context steps (each step's figures: evidence.context.steps)",
                "steps": len(steps), "steps_with_output": len(outputs)})
    answer = "\n".join(f"[window {s.record['window']}] {s.output.transcript.answer}"
                       for s in steps if s.output is not None)
    thinking = "\n".join(f"[window {s.record['window']}] {s.output.transcript.thinking}"
                         for s in steps if s.output is not None and s.output.transcript.thinking)
    last = outputs[-1]
    effective = {**last.effective, "context_size": None,
                 "context_sizes": [s.record["context_size"] for s in steps]}
    events = tuple({"kind": "context_step", "window": s.record["window"], "prompt": s.prompt,
                    "answer": s.output.transcript.answer if s.output else None,
                    "thinking": s.output.transcript.thinking if s.output else None}
                   for s in steps)
    return DriverOutput(Transcript(answer=answer, thinking=thinking,
                                   finish_reason=last.transcript.finish_reason),
                        metrics, last.runtime, effective, events)


def context_attempt(task: TaskSpec, driver: Driver, request: DriverRequest
                    ) -> tuple[Settings, DriverOutput | None, DriverError | None, Verdict]:
    """Every step of the scenario in order. The attempt is an error only when no step got
    an answer and none of those errors is the model's own (a dead server): else each
    failed step counts as not retrieved."""
    scenario = Scenario.of(task.frontmatter, task.body)
    seed = scenario.seed_for(request.settings.seed, secrets.randbits(31))
    codes = draw_codes(seed, len(scenario.steps))
    steps = [run_step(task, driver, request, scenario, window, code)
             for window, code in zip(scenario.steps, codes, strict=True)]
    records = [s.record for s in steps]
    spill, spill_note = spill_point(records)
    passed = sum(s.detail.passed for s in steps)
    failures = "; ".join(f"{s.record['window']}: {s.detail.message}" for s in steps
                         if not s.detail.passed)
    notes = f"needle found in {passed}/{len(steps)} windows" + (
        f" (not found: {failures})" if failures else "")
    evidence = {"check": "needle", "context": {
        "scenario": task.id, "needle_seed": seed, "fill_ratio": scenario.fill_ratio,
        "needle_depth": scenario.needle_depth, "steps": records, "spill_point": spill,
        "spill_note": spill_note}}
    verdict = Verdict("pass" if passed == len(steps) else "fail",
                      tuple(s.detail for s in steps), notes[:4000], evidence=evidence)
    errors = [s.error for s in steps if s.error is not None]
    error = None
    if len(errors) == len(steps) and not any(ERROR_KINDS[e.kind] for e in errors):
        error = errors[0]
    recorded = replace(request.settings, context_size=max(scenario.steps),
                       context_size_source="context steps: "
                       + ", ".join(str(w) for w in scenario.steps))
    return recorded, _combined(steps), error, verdict
