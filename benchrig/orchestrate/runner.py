"""One attempt (prompt → driver → check → result file) and the matrix of tasks × models × runs."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchrig import __version__
from benchrig.checks import load_checks
from benchrig.checks.judge import unjudged
from benchrig.config import Config
from benchrig.core.deadline import Deadline
from benchrig.core.errors import BenchRigError, DriverError
from benchrig.core.measurements import Metrics
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import DriverOutput
from benchrig.core.verdict import Verdict
from benchrig.drivers.base import Driver, DriverRequest, Progress, SilentProgress
from benchrig.environment import environment
from benchrig.jsonsafe import json_safe
from benchrig.metrics import with_thinking_tokens
from benchrig.prompt import render
from benchrig.resultio.files import (
    SCHEMA_VERSION,
    excerpt,
    result_path,
    result_text,
    utc_now,
    validate,
    write_atomic,
)
from benchrig.sandbox import SandboxPool
from benchrig.suites import get_suite
from benchrig.suites.base import AttemptInput, Outcome
from benchrig.textsafe import printable, type_name

if TYPE_CHECKING:  # the plan's types: a run without a plan (verify) needs no executor
    from benchrig.execute import AttemptSpec, Slot

DEFAULT_MAX_TOKENS = 1024
DEFAULT_CONTEXT = 4096
PROMPT_ROOM = 2048  # tokens left for the prompt when the context grows to fit the budget


@dataclass(frozen=True)
class Overrides:
    """Settings given on the command line; None means the task's or the default value."""

    temperature: float | None = None
    max_tokens: int | None = None
    context_size: int | None = None
    threads: int | None = None
    think: bool | None = None
    seed: int = 0  # the base seed: run k of a task is sent seed + k


# What a driver may send, drop or cap: the result records what it says it sent (its
# `effective`), null where it says nothing, and what was asked as `<name>_requested`.
SENT = ("temperature", "max_tokens", "context_size", "think", "seed", "threads")


class UnrecordedAttempt(BenchRigError):
    """Not even the error result of an attempt could be written; `result` is that error
    result, so the run can still count the attempt."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class Attempt:
    result: dict[str, Any]
    path: Path


def settings_for(task: TaskSpec, overrides: Overrides, model: str | None = None,
                 config: Config | None = None, run_index: int = 0) -> Settings:
    """Command line over task frontmatter over benchrig.toml over defaults.

    A thinking model (config `thinking_models`) gets the task's token budget times
    `thinking_token_multiplier` in the answer-scored suites (coding, reasoning, polish, tool
    use); an explicit `--max-tokens` is taken as given. `think` left at None means the
    model's own default.
    Without `--context-size` the context grows past the default to fit the budget and a
    prompt (`max_tokens + PROMPT_ROOM`), so a multiplied budget is not silently capped.
    Run `run_index` of a task asks for seed `overrides.seed + run_index`, so repeated runs
    are distinct, reproducible samples wherever the runtime honours a seed.
    """
    config = config or Config()
    def pick(*values: Any) -> Any:
        return next((v for v in values if v is not None), None)

    multiplier = config.multiplier(model, task.suite) if model else 1
    if overrides.max_tokens is not None:
        max_tokens, multiplier = overrides.max_tokens, 1
    else:
        max_tokens = pick(task.max_tokens, DEFAULT_MAX_TOKENS) * multiplier
    if overrides.context_size is not None:
        context_size, context_source = overrides.context_size, "command line"
    elif max_tokens + PROMPT_ROOM > DEFAULT_CONTEXT:
        context_size, context_source = max_tokens + PROMPT_ROOM, f"max_tokens + {PROMPT_ROOM}"
    else:
        context_size, context_source = DEFAULT_CONTEXT, "default"
    think, think_source = next(
        ((value, source) for value, source in (
            (overrides.think, "command line"), (task.think, "task"),
            (config.think_default(task.suite), "suite default")) if value is not None),
        (None, "model default"))
    return Settings(
        temperature=pick(overrides.temperature, task.temperature, 0.0),
        max_tokens=max_tokens,
        context_size=context_size,
        context_size_source=context_source,
        think=think,
        threads=overrides.threads,
        seed=overrides.seed + run_index,
        timeout_s=float(task.timeout_s),
        thinking_model=config.is_thinking_model(model) if model else None,
        max_tokens_multiplier=multiplier,
        think_source=think_source,
        config_file=str(config.path) if config.path else None,
    )


def recorded_settings(settings: Settings, output: DriverOutput | None) -> dict[str, Any]:
    """The settings as the driver says it used them: for each of SENT its `effective` value
    (null when it did not say: nothing was sent, or nothing is known), beside what was asked."""
    asked = settings.to_json()
    effective = dict(output.effective) if output else {}
    return {**asked, **effective, **{name: effective.get(name) for name in SENT},
            **{f"{name}_requested": asked[name] for name in SENT}}


def candidate_cpu_s(verdict: Verdict | None) -> float | None:
    """The CPU time of the sandboxed candidate processes, when the check ran any."""
    sandbox = verdict.evidence.get("sandbox") if verdict else None
    cpu = sandbox.get("cpu_s") if isinstance(sandbox, dict) else None
    return float(cpu) if isinstance(cpu, int | float) and not isinstance(cpu, bool) else None


def _metrics(output: DriverOutput | None, check_s: float | None,
             verdict: Verdict | None) -> dict[str, Any]:
    transcript = output.transcript if output else None
    metrics = (with_thinking_tokens(output.metrics, transcript.thinking, transcript.answer)
               if output and transcript else Metrics()).to_json()
    metrics["check_s"] = check_s
    metrics["candidate_cpu_s"] = candidate_cpu_s(verdict)
    return metrics


def _checks(task: TaskSpec, verdict: Verdict | None, error: DriverError | None
            ) -> dict[str, Any]:
    # an attempt that ended in an error was not judged: its check says what that leaves
    details = unjudged(task, error) if error is not None else verdict.details if verdict else ()
    return {
        "passed": sum(d.passed for d in details),
        "total": len(details),
        "details": [
            {"name": d.name, "passed": d.passed, "message": d.message[:2000],
             "duration_s": round(d.duration_s, 6)}
            for d in details
        ],
    }


def _result(task: TaskSpec, model: str, agent: str, driver: str, provider: str | None,
            settings: Settings, started: str, ended: str, output: DriverOutput | None,
            error: DriverError | None, verdict: Verdict | None, check_s: float | None,
            ) -> dict[str, Any]:
    transcript = output.transcript if output else None
    if error is not None:
        outcome, notes = "error", f"{error.kind}: {error.message}"
    else:
        assert verdict is not None
        outcome, notes = verdict.result, verdict.notes
    return {
        "schema_version": SCHEMA_VERSION,
        "task": task.id,
        "model": model,
        "agent": agent,
        "started_at": started,
        "ended_at": ended,
        "run_id": secrets.token_hex(6),
        "metrics": _metrics(output, check_s, verdict),
        "result": outcome,
        "pass_at_1": outcome == "pass",
        "notes": notes,
        "suite": task.suite,
        "driver": driver,
        "provider": provider,
        "settings": recorded_settings(settings, output),
        "checks": _checks(task, verdict, error),
        "truncated": bool(verdict and verdict.truncated),
        "truncated_thinking": bool(verdict and verdict.truncated_thinking),
        "finish_reason": transcript.finish_reason if transcript else None,
        "answer_excerpt": excerpt(transcript.answer) if transcript else "",
        "error": ({"kind": error.kind, "message": error.message, "phase": error.phase}
                  if error else None),
        "task_hash": task.task_hash,
        **({"sample_id": task.sample_id, "row_hash": task.row_hash}
           if task.sample_id is not None else {}),
        "benchrig_version": __version__,
        "environment": environment(dict(output.runtime) if output else {"name": driver}),
        "isolation": verdict.isolation if verdict else None,
        "code_source": verdict.code_source if verdict else None,
        "sandbox_error": verdict.sandbox_error if verdict else None,
        "evidence": verdict.evidence if verdict else {},
    }


def _transcript(request: DriverRequest, output: DriverOutput | None) -> list[dict[str, Any]]:
    """The sidecar's lines: the prompt, then the answer and the driver's events."""
    lines: list[dict[str, Any]] = [{"kind": "prompt", "messages": list(request.messages)}]
    if output is not None:
        t = output.transcript
        lines.append({"kind": "answer", "text": t.answer, "thinking": t.thinking,
                      "finish_reason": t.finish_reason, "tool_calls": list(t.tool_calls),
                      "turns": t.turns, "files": dict(t.files),
                      **({"tool_turns": list(t.tool_turns)} if t.tool_turns else {})})
        lines.extend(dict(event) for event in output.events)
    return lines


def _write_transcript(path: Path, lines: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(json_safe(line), ensure_ascii=False, allow_nan=False)
                               + "\n" for line in lines))


# task, model, agent, driver, provider, settings, started, ended
Head = tuple[TaskSpec, str, str, str, str | None, Settings, str, str]


@dataclass(frozen=True)
class Produced:
    """An attempt run but not yet recorded: its result and transcript lines, plain data that
    a worker hands back to the process that writes the results folder (`record`)."""

    result: dict[str, Any]
    transcript: list[dict[str, Any]]
    head: Head  # what _result needs to make the error result if writing fails


def run_attempt(task: TaskSpec, model: str, driver: Driver, provider: str | None,
                settings: Settings, results_dir: Path, agent: str | None = None,
                progress: Progress | None = None, pass_env: tuple[str, ...] = (),
                run_index: int | None = None, sandboxes: SandboxPool | None = None) -> Attempt:
    """Run `task` once and write its validated result; a failing model is a result, not an
    exception. `run_index` (which of the runs this is) identifies the attempt to retry;
    candidate code runs in `sandboxes`, the run's pool (see checks.coding.run_tests)."""
    return record(produce(task, model, driver, provider, settings, results_dir, agent,
                          progress, pass_env, sandboxes), results_dir, run_index)


def perform(spec: AttemptSpec, slot: Slot, driver: Driver,
            sandboxes: SandboxPool | None) -> Produced:
    """The work of one planned attempt (an executor's `work`): run, never write."""
    return produce(spec.task, spec.model, driver, spec.provider, spec.settings,
                   spec.results_dir, spec.agent, slot.progress, spec.pass_env, sandboxes)


def produce(task: TaskSpec, model: str, driver: Driver, provider: str | None,
            settings: Settings, results_dir: Path, agent: str | None = None,
            progress: Progress | None = None, pass_env: tuple[str, ...] = (),
            sandboxes: SandboxPool | None = None) -> Produced:
    """Run `task` once: its result and transcript, not yet validated nor written."""
    # before the driver: an agent must not be able to change the judge (a replay runs
    # nothing: of the built-in checks it needs only its own)
    load_checks({task.check_type} if driver.kind == "replay" and task.check_type else None)
    messages = render(task, "agent" if driver.kind == "agent" else "chat")
    # the attempt's one deadline: the driver's phases and the checking all spend from it
    deadline = Deadline(settings.timeout_s)
    request = DriverRequest(task.view(), messages, model, provider, settings,
                            progress or SilentProgress(),
                            hidden_paths=(results_dir, *task.folders), pass_env=pass_env,
                            deadline=deadline)
    started = utc_now()
    # the task's suite shapes the attempt: one answer, a conversation, a window ladder, …
    try:
        done = get_suite(task.suite).attempt(AttemptInput(task, driver, request, sandboxes,
                                                          progress))
    except Exception as exc:  # a suite's bug: BenchRig is broken, this attempt says so
        done = Outcome(settings, None, DriverError(
            "harness", f"the {task.suite} suite failed: {type_name(exc)}: "
            f"{printable(str(exc))}", phase=deadline.phase), None, None, utc_now())
    settings, output, error, verdict = done.settings, done.output, done.error, done.verdict
    check_s, ended = done.check_s, done.ended
    if output is None and error is not None:
        output = error.partial  # what was measured before it failed: recorded, never checked
    head: Head = (task, model, agent or driver.name, driver.name, provider, settings, started,
                  ended)
    return Produced(_result(*head, output, error, verdict, check_s),
                    _transcript(request, output), head)


def planned_notes(spec: AttemptSpec, in_flight: int, repeated: Mapping[str, str]
                  ) -> dict[str, Any]:
    """What a planned attempt's result records of its run (`record`'s annotations): its
    label, the jobs and attempts in flight beside it, and what was done about identical
    repeats of its task (`repeated`: task id → sampled | identical)."""
    settings: dict[str, Any] = {"jobs": spec.jobs, "in_flight": in_flight}
    if spec.task.id in repeated:
        settings["repeats"] = repeated[spec.task.id]
    return {"label": spec.label, "settings": settings}


def record(produced: Produced, results_dir: Path, run_index: int | None = None,
           annotations: dict[str, Any] | None = None) -> Attempt:
    """Validate and write a produced attempt (in the process that owns the results folder);
    `annotations` are merged into the result first (the run's label, its concurrency). A
    failure to write is itself recorded as an error result."""
    def annotated(result: dict[str, Any]) -> dict[str, Any]:
        result = dict(result)
        for name, value in (annotations or {}).items():
            if isinstance(value, dict):
                result[name] = {**result.get(name, {}), **value}
            else:
                result[name] = value
        return result

    try:
        return _record(annotated(produced.result), produced.transcript, results_dir,
                       run_index)
    except Exception as exc:  # BenchRig could not record it: that failure is the result
        failed = DriverError("harness", f"writing the result failed: {type_name(exc)}: "
                             f"{printable(str(exc))}")
    fallback = annotated(_result(*produced.head, None, failed, None, None))
    try:
        return _record(fallback, produced.transcript[:1], results_dir, run_index)
    except Exception as exc:
        task, model = produced.head[:2]
        raise UnrecordedAttempt(f"{task.id} · {model}: no result could be written "
                                f"({failed.message}; then {type_name(exc)}: "
                                f"{printable(str(exc))})", json_safe(fallback)) from exc


def _record(result: dict[str, Any], transcript: list[dict[str, Any]], results_dir: Path,
            run_index: int | None) -> Attempt:
    """Validate `result`, then write its sidecar and itself."""
    # raw server and agent data inside (engine, runtime, settings) may hold inf or deep
    # nesting, and any outside string a lone surrogate
    result = json_safe(result)
    path = result_path(results_dir, result)
    sidecar = path.with_suffix(".transcript.jsonl")
    result["transcript_file"] = sidecar.name
    if run_index is not None:
        result["run_index"] = run_index
    validate(result)  # before anything is written: an invalid result leaves no sidecar either
    _write_transcript(sidecar, transcript)
    write_atomic(path, result_text(result))
    return Attempt(result, path)


def matrix(tasks: list[TaskSpec], models: list[str],
           runs: int) -> Iterator[tuple[TaskSpec, str, int]]:
    """Every (task, model, run) in a stable order: model-major, so a model loads once."""
    for model in models:
        for task in tasks:
            for run in range(runs):
                yield task, model, run
