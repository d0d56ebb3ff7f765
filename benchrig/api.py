"""The library API: run tasks on models, load results, summarize them (docs/library.md)."""

from __future__ import annotations

import queue
import threading
import warnings
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchrig import paths
from benchrig.config import Config
from benchrig.core.errors import UsageError
from benchrig.core.settings import SAMPLING_TEMPERATURE, Settings
from benchrig.core.task import TaskSpec, sandboxed
from benchrig.drivers.base import Driver
from benchrig.execute.base import AttemptSpec, Slot
from benchrig.orchestrate.runner import (
    Overrides,
    Produced,
    UnrecordedAttempt,
    perform,
    planned_notes,
    record,
    settings_for,
)
from benchrig.resultio.record import Record, as_records
from benchrig.textsafe import printable

__all__ = ["Result", "Results", "load_results", "run", "select", "summarize"]

# A result as the result file holds it (schema/result.schema.json): the published contract,
# with every key; `record.Record` is the views' compact copy of a few of them.
Result = dict[str, Any]
Results = Generator[Result, None, None]  # closed early: the attempts in flight are stopped
STOP_WAIT_S = 60.0  # the most close() waits for a stopped run to clean up


def select(tasks: Sequence[str] = (), suites: Sequence[str] = ()) -> list[TaskSpec]:
    """The tasks named (ids, files or folders) of the suites or packs named, as `benchrig
    run` selects them (none named: every task of every suite that is not opt-in)."""
    from benchrig.packs.task_choice import load_selection
    from benchrig.suites import SUITES, get_suite, known_suites

    # the installed packages are read only when a name is not a built-in suite's
    chosen = load_selection(list(tasks), list(suites), SUITES if set(suites) <= set(SUITES)
                            else known_suites())
    if not suites and not tasks:  # an opt-in suite (tool_use) runs only when named
        chosen = [t for t in chosen if not get_suite(t.suite).opt_in]
    return chosen


Settle = Callable[[TaskSpec, str, int], Settings]  # an attempt's settings: (task, model, run)


def settings_of(overrides: Overrides, config: Config, repeats: Mapping[str, str]) -> Settle:
    """Each attempt's settings from the overrides, the settings file and the task; a task
    whose repeats are sampled (execute.plan.repeats) is sent SAMPLING_TEMPERATURE."""
    sampling = replace(overrides, temperature=SAMPLING_TEMPERATURE)

    def settings(task: TaskSpec, model: str, run_index: int) -> Settings:
        chosen = sampling if repeats.get(task.id) == "sampled" else overrides
        return settings_for(task, chosen, model=model, config=config, run_index=run_index)
    return settings


def planned(keyed: Sequence[tuple[str, tuple[TaskSpec, str, int]]],
            drivers: Mapping[str, Driver], providers: Mapping[str, str | None],
            settings: Mapping[str, Settle], results_dir: Path,
            pass_env: tuple[str, ...] = (), label: str | None = None, jobs: int = 1
            ) -> list[AttemptSpec]:
    """The (driver as named, (task, model, run)) pairs of a plan (execute.plan.ordered) as
    attempt descriptions, numbered in plan order, each with its own driver's provider, lane
    and settings: what `benchrig run` and `run` both execute."""
    from benchrig.execute.plan import attempt_specs

    return [replace(spec, index=index) for index, (agent, key) in enumerate(keyed)
            for spec in attempt_specs([key], drivers[agent].name, agent, providers[agent],
                                      settings[agent], results_dir, pass_env, label, jobs)]


def run(tasks: Sequence[str] = (), models: Sequence[str] = ("smollm2",), *,
        driver: str | Sequence[str] = "llamacpp", provider: str | Sequence[str] = (),
        runs: int = 1, jobs: int = 1, suites: Sequence[str] = (),
        results_dir: Path | str | None = None, overrides: Overrides | None = None,
        label: str | None = None, config: Path | None = None,
        on_result: Callable[[Result], None] | None = None) -> Results:
    """Run every task on every model with each driver, as `benchrig run` does (the same
    plan, executor and runner), and yield each result as its file is written, in completion
    order. Nothing is printed; bad input raises UsageError before anything runs. Stopping
    the iteration early stops the attempts in flight (none of them is recorded)."""
    from benchrig.checks import load_checks
    from benchrig.config import load_config
    from benchrig.drivers import get_driver, known
    from benchrig.execute.plan import ordered, repeats
    from benchrig.execute.plan import providers as providers_of
    from benchrig.orchestrate.runner import matrix
    from benchrig.resultio.files import check_results_dir
    from benchrig.textsafe import stored

    if runs < 1 or jobs < 1:
        raise UsageError(f"runs and jobs must be at least 1 (runs={runs}, jobs={jobs})")
    out_dir = Path(results_dir) if results_dir is not None else paths.results_dir()
    check_results_dir(out_dir)
    chosen = select(tasks, suites)
    if not chosen:
        raise UsageError("no task matches the selection")
    _refuse_sweeps(chosen)
    agents = list(dict.fromkeys([driver] if isinstance(driver, str) else driver))
    engines = {agent: get_driver(agent) for agent in agents}  # UsageError: unknown driver
    if len({engine.name for engine in engines.values()}) < len(engines):
        raise UsageError(f"the same driver is named twice: {', '.join(agents)}")
    model_names = list(models)
    given = providers_of(agents, [provider] if isinstance(provider, str) else list(provider),
                         model_names, known)
    for agent in agents:  # every (driver, provider, model) checked before anything runs
        for name in model_names:
            engines[agent].preflight(name, given[agent])
    _warn_confinement(chosen, engines)
    temperature = overrides.temperature if overrides else None
    repeated = {agent: repeats(chosen, runs, engines[agent].kind, temperature, False)
                for agent in agents}
    settings_file = load_config(config)
    keyed = ordered({agent: list(matrix(chosen, model_names, runs)) for agent in agents},
                    model_names)
    specs = planned(keyed, engines, given,
                    {agent: settings_of(overrides or Overrides(), settings_file,
                                        repeated[agent]) for agent in agents},
                    out_dir, label=stored(label) if label else None, jobs=jobs)
    load_checks({t.check_type for t in chosen if t.check_type}
                if all(e.kind == "replay" for e in engines.values()) else None)
    return _results(specs, engines, repeated, out_dir, on_result)


def _refuse_sweeps(chosen: Sequence[TaskSpec]) -> None:
    """A suite that is not planned attempts (a load sweep: its own runner, in the command)
    is refused before anything runs, never recorded as a harness error per task."""
    from benchrig.suites import get_suite
    from benchrig.suites.shapes import sweep_only

    sweeps = [task for task in chosen if get_suite(task.suite).attempt is sweep_only]
    if sweeps:
        raise UsageError(f"{printable(sweeps[0].id)}: the {printable(sweeps[0].suite)} suite "
                         f"is a sweep, not attempts: run it with `benchrig run --suite "
                         f"{printable(sweeps[0].suite)}`")


def _warn_confinement(chosen: Sequence[TaskSpec], engines: Mapping[str, Driver]) -> None:
    """A confinement gap said as a Python warning (stderr, or the caller's filter), never
    printed to stdout: a library caller decides what to show."""
    from benchrig import sandbox

    if any(engine.kind == "agent" for engine in engines.values()):
        from benchrig.drivers import confine

        if note := confine.warning(confine.detect()):
            warnings.warn(note, RuntimeWarning, stacklevel=3)
    tests = any(t.check_type == "tests" for t in chosen)
    if tests and (note := sandbox.warning(sandbox.detect())):
        warnings.warn(note, RuntimeWarning, stacklevel=3)


class _Stopped(Exception):
    """Raised from the recording callback once the caller stops iterating: the executor
    stops every attempt in flight, as it does for Ctrl-C or too many errors."""


def _results(specs: list[AttemptSpec], engines: Mapping[str, Driver],
             repeated: Mapping[str, Mapping[str, str]], out_dir: Path,
             on_result: Callable[[Result], None] | None) -> Results:
    """The plan run by the local executor in a thread of its own; each result handed over
    as it is recorded, so the caller iterates while attempts run."""
    from benchrig import sandbox
    from benchrig.execute import LocalExecutor
    from benchrig.execute.folder import held

    jobs = specs[0].jobs if specs else 1
    handed: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    stopping = threading.Event()
    tests = sandboxed(spec.task for spec in specs)
    pool = sandbox.SandboxPool(sandbox.detect() if tests else None, expected=tests)

    def work(spec: AttemptSpec, slot: Slot) -> tuple[int, Produced]:
        return slot.in_flight, perform(spec, slot, engines[spec.agent], pool)

    def done(spec: AttemptSpec, outcome: tuple[int, Produced]) -> None:
        if stopping.is_set():  # the caller has stopped iterating: record nothing more
            raise _Stopped
        in_flight, produced = outcome
        try:
            result = record(produced, out_dir, spec.run_index,
                            planned_notes(spec, in_flight, repeated[spec.agent])).result
        except UnrecordedAttempt as exc:  # an error result, as the CLI counts it
            result = exc.result
        handed.put(("result", result))

    def execute() -> None:
        try:
            with held(out_dir), pool:
                LocalExecutor(jobs).run(specs, work, done)
        except _Stopped:
            pass  # the caller stopped iterating: nobody reads on
        except BaseException as exc:  # handed to the caller's thread, raised there
            handed.put(("raised", exc))
        else:
            handed.put(("end", None))

    def iterate() -> Results:
        worker = threading.Thread(target=execute, daemon=True, name="benchrig-api-run")
        worker.start()
        finished = False
        try:
            while True:
                kind, value = handed.get()
                if kind == "end":
                    finished = True
                    return
                if kind == "raised":
                    finished = True
                    raise value
                if on_result is not None:
                    on_result(value)
                yield value
        finally:
            if not finished:  # the caller stopped early: stop the run
                # Told, not interrupted: an exception raised into the executor's thread at
                # an arbitrary instruction could land in a write or the sandboxes' close.
                # The next attempt to finish is not recorded; the executor then stops the
                # others as on Ctrl-C and closes the sandboxes. Waited for, within reason.
                stopping.set()
                worker.join(STOP_WAIT_S)

    return iterate()


def load_results(path: Path | str | Iterable[Path | str]) -> list[Record]:
    """The valid results in result files or folders, as records; a file that is not a
    valid result is left out (`benchrig.resultio.files.load_records` says which and why)."""
    from benchrig.resultio.files import load_records

    given = [path] if isinstance(path, (str, Path)) else list(path)
    return load_records([Path(p) for p in given]).records


def summarize(results: Iterable[Mapping[str, Any]], format: str = "table") -> str:
    """The per-model table and scorecards of `results` (result dicts or records) in
    `format` (table, markdown, csv, json), as `benchrig summary` renders them."""
    from benchrig.report import FORMATS, render

    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    return render(as_records(results), format)
