"""A sweep: each level run, then written as its own result before the next starts, so
Ctrl-C keeps every finished level."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig import __version__
from benchrig.core.deadline import current_stop
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.environment import environment
from benchrig.load.engine import Level, LevelRun, Workload, event_loop, run_level
from benchrig.load.figures import level_figures, level_metrics
from benchrig.load.runtime import server_runtime
from benchrig.load.sweep_plan import Prompts, saturated
from benchrig.load.wire import Endpoint
from benchrig.orchestrate.runner import Attempt, Produced, record, recorded_settings
from benchrig.resultio.files import SCHEMA_VERSION, utc_now
from benchrig.textsafe import printable


@dataclass(frozen=True)
class Target:
    """Who answers: the model asked for, the driver and provider as given, the base URL."""

    model: str
    agent: str
    driver: str
    provider: str | None
    base_url: str
    api_key: str | None = None  # sent, never recorded


def _notes(figures: Mapping[str, Any], level: Level) -> str:
    where = (f"concurrency {level.concurrency}" if level.concurrency is not None
             else f"{level.rate:g} req/s {level.arrivals}")
    ttft = figures["ttft_ms"]
    parts = [f"{where}: {figures['completed']}/{figures['requests']} completed"]
    if ttft["p50"] is not None:
        parts.append(f"TTFT p50 {ttft['p50']:.1f} ms p99 {ttft['p99']:.1f} ms")
    parts.append(f"{figures['request_throughput']:.2f} req/s, "
                 f"{figures['output_tokens_per_s']:.1f} tok/s")
    if figures["errors"]:
        parts.append(f"{figures['errors']} errors ({printable(figures['error_examples'][0])})")
    return "; ".join(parts)


def level_result(task: TaskSpec, target: Target, settings: Settings, run: LevelRun,
                 evidence: dict[str, Any], started: str, ended: str,
                 runtime: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One level as a result: `no-test` (measured, nothing to check), or `error` (infra)
    when no request of the level completed."""
    figures = evidence
    failed = figures["completed"] == 0
    message = (f"no request completed: {figures['error_examples'][0]}"
               if failed and figures["error_examples"] else "no request completed")
    return {
        "schema_version": SCHEMA_VERSION, "task": task.id, "model": target.model,
        "agent": target.agent, "started_at": started, "ended_at": ended,
        "run_id": secrets.token_hex(6), "metrics": level_metrics(figures),
        "result": "error" if failed else "no-test", "pass_at_1": False,
        "notes": f"infra: {message}" if failed else _notes(figures, run.level),
        "suite": task.suite, "driver": target.driver, "provider": target.provider,
        "settings": recorded_settings(settings, None), "checks": {"passed": 0, "total": 0,
                                                                  "details": []},
        "truncated": False, "finish_reason": None, "answer_excerpt": "",
        "error": {"kind": "infra", "message": message, "phase": "load"} if failed else None,
        "task_hash": task.task_hash, "benchrig_version": __version__,
        "environment": environment(dict(runtime or {"name": target.driver, "version": None})),
        "isolation": None, "evidence": {"load": figures},
    }


def _transcript(run: LevelRun, prompts: Prompts) -> list[dict[str, Any]]:
    """The sidecar: how the prompts were made, then one line per request (warm-up first)."""
    lines: list[dict[str, Any]] = [{"kind": "prompts", **prompts.record()}]
    for kind, records in (("warmup", run.warmup), ("request", run.records)):
        for r in records:
            lines.append({"kind": kind, "ttft_ms": r.chunks[0] * 1000 if r.chunks else None,
                          "end_ms": r.end * 1000 if r.end is not None else None,
                          "chunks": len(r.chunks), "usage_output": r.usage_output,
                          "error_kind": r.error_kind, "error": r.error})
    return lines


def run_sweep(task: TaskSpec, target: Target, settings: Settings, levels: list[Level],
              prompts: Prompts, slo: Mapping[str, float], results_dir: Path,
              saturation: bool = False, extra: Mapping[str, Any] | None = None,
              label: str | None = None,
              recorded: Callable[[Attempt], None] | None = None) -> list[Attempt]:
    """Run `levels` in order, each written as its own result when it ends (`recorded` is
    told). A saturation sweep stops at its knee; any sweep stops after a level in which no
    request completed (the server is gone: more levels would only repeat it), and at the
    stop of the attempt running in this thread (`core.deadline.Stop`): before a level, or
    within one, which is then cut short and not recorded."""
    work = Workload(Endpoint.of(target.base_url), target.model, prompts.texts,
                    settings.max_tokens, settings.timeout_s,
                    {"temperature": settings.temperature, **(extra or {})}, target.api_key)
    sweep_id = secrets.token_hex(6)
    # asked once, before any level is timed: what answers, as it names itself
    runtime = server_runtime(target.base_url, target.driver, target.api_key)
    attempts: list[Attempt] = []
    throughputs: list[float] = []
    stop = current_stop()
    with event_loop() as loop:  # one loop for every level: Ctrl-C lands on a whole one
        for index, level in enumerate(levels):
            if stop is not None and stop.is_set():
                break
            started = utc_now()
            run = run_level(work, level, loop)
            ended = utc_now()
            if run.stopped:  # a level cut short measured nothing to keep
                break
            figures = level_figures(run, slo)
            evidence = {"sweep_id": sweep_id, "index": index, "mode": level.mode,
                        "concurrency": level.concurrency, "rate": level.rate,
                        "arrivals": level.arrivals if level.rate is not None else None,
                        "seed": level.seed, "bound": {"requests": level.requests,
                                                      "duration_s": level.duration_s},
                        "prompt": prompts.record(), "max_tokens": settings.max_tokens,
                        "saturation": saturation, **figures}
            result = level_result(task, target, settings, run, evidence, started, ended,
                                  runtime)
            head = (task, target.model, target.agent, target.driver, target.provider,
                    settings, started, ended)
            attempt = record(Produced(result, _transcript(run, prompts), head), results_dir,
                             index, {"label": label})
            attempts.append(attempt)
            if recorded:
                recorded(attempt)
            if figures["completed"] == 0:
                break
            throughputs.append(figures["request_throughput"])
            error_share = figures["errors"] / max(1, figures["requests"])
            if saturation and saturated(throughputs, error_share):
                break
    return attempts
