"""`benchrig run`: the models × agents × tasks × runs of a command line, run by an executor,
each result recorded and its verdict line printed."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from typer import Argument, Exit, Option, echo

from benchrig import paths
from benchrig.core.errors import BenchRigError, UsageError, counts_against_model
from benchrig.textsafe import printable, stored
from benchrig.ui import AttemptLine, RunProgress, error, info, warn

if TYPE_CHECKING:
    from benchrig.config import Config
    from benchrig.core.task import TaskSpec
    from benchrig.drivers.base import Driver
    from benchrig.execute import AttemptSpec
    from benchrig.orchestrate.runner import Overrides
    from benchrig.sandbox import Confinement, SandboxPool

from benchrig.cli.app import ExecutorName, _load, app
from benchrig.core.settings import SAMPLING_TEMPERATURE

Arrivals = Literal["constant", "poisson"]  # --suite load --rate

# --max-errors by default: a tenth of the run, as Inspect AI's --fail-on-error 0.1, but never
# fewer than a few, so one flaky request does not stop a short run.
MAX_ERRORS_FRACTION = 0.1
MIN_MAX_ERRORS = 3


@app.command(short_help="Run tasks on models; one result file per attempt.")
def run(
    tasks: Annotated[list[str] | None, Argument(
        help="Task ids or files (default: every task, filtered by --suite).")] = None,
    suite: Annotated[list[str] | None, Option("--suite", "-s",
        help="Only tasks of this suite or imported pack (repeatable).")] = None,
    pack: Annotated[list[str] | None, Option("--pack",
        help="The tasks of this imported pack (repeatable; see `benchrig import`).")] = None,
    model: Annotated[list[str] | None, Option("--model", "-m",
        help="Model name or .gguf path (repeatable). [default: smollm2]")] = None,
    driver: Annotated[list[str] | None, Option("--driver", "--agent", "-d",
        help="Agent or runtime that answers (see `benchrig list`; repeatable: each one "
             "runs every task on every model, one matrix). [default: llamacpp]")] = None,
    provider: Annotated[list[str] | None, Option("--provider", "-p",
        help="Agent provider, runtime base URL, or (replay) the answer file: one value for "
             "every --driver, or AGENT=VALUE for one of them (repeatable; a pair wins over "
             "the shared value). claude: stream-json, json or local; codex: a config "
             "model_provider id or local. [default: local for an agent that can use an "
             "embedded model (smollm2, a .gguf), else none: the agent's own, OLLAMA_HOST for "
             "ollama]")] = None,
    runs: Annotated[int, Option("--runs", "-n", min=1, help="Attempts per task.")] = 1,
    results_dir: Annotated[Path | None, Option(help="Where result files go. [default: "
        "$BENCHRIG_RESULTS_DIR, else results/ in this checkout]")] = None,
    temperature: Annotated[float | None, Option(min=0.0, max=2.0,
        help="Sampling temperature. [default: the task's temperature, else 0.0]")] = None,
    max_tokens: Annotated[int | None, Option(min=1,
        help="Token budget of the answer. [default: the task's max_tokens, else 1024; times "
             "thinking_token_multiplier for a thinking model (benchrig.toml)]")] = None,
    context_size: Annotated[int | None, Option(min=256,
        help="Context window. [default: 4096, or max_tokens + 2048 when larger]")] = None,
    threads: Annotated[int | None, Option(min=1,
        help="CPU threads of the embedded model. [default: every usable core but one]")
                       ] = None,
    think: Annotated[bool | None, Option("--think/--no-think",
        help="Force thinking on or off. [default: benchrig.toml's per-suite setting, else "
             "the model's own]")] = None,
    seed: Annotated[int, Option(min=0, max=2**31 - 1,
        help="Base seed: run k of a task is sent seed + k (where the runtime takes one).")
                    ] = 0,
    config: Annotated[Path | None, Option("--config",
        help="Settings file. [default: ./benchrig.toml if present]")] = None,
    require_isolation: Annotated[bool, Option("--require-isolation",
        help="Refuse to run (exit 2) unless candidate code gets full isolation (bubblewrap "
             "under a dedicated uid) and an agent can be confined (see docs/security.md).")
                           ] = False,
    pass_env: Annotated[list[str] | None, Option("--pass-env", metavar="NAME",
        help="Also give an agent this host environment variable (repeatable); by default it "
             "gets only its provider's, locale, proxy and terminal variables "
             "(see docs/agents.md).")] = None,
    retry_errors: Annotated[bool, Option("--retry-errors",
        help="Run again only the attempts of this selection (tasks, models, each driver "
             "with its provider) whose latest result in the results folder is an error.")] = False,
    jobs: Annotated[int, Option("--jobs", "-j", min=1,
        help="Attempts in flight at once (HTTP runtimes, agents); the embedded model runs "
             "one attempt at a time, speed and context tasks run alone.")] = 1,
    resume: Annotated[bool, Option("--resume",
        help="Skip every attempt that already has a result in the results folder (same "
             "task hash, model, driver, provider, settings, label and run); with "
             "--retry-errors, also run again those whose latest result is an error.")
                      ] = False,
    label: Annotated[str | None, Option("--label", metavar="NAME",
        help="A name for this experiment, recorded in every result.")] = None,
    executor: Annotated[ExecutorName, Option("--executor",
        help="Where attempts run: threads of this process, or a Ray cluster (pip install "
             "'.[ray]'; see docs/scale-out.md).")] = "local",
    ray_address: Annotated[str | None, Option("--ray-address", metavar="ADDR",
        help="The Ray cluster to join (default: $RAY_ADDRESS, else a local Ray started "
             "for the run).")
                           ] = None,
    limit: Annotated[int | None, Option("--limit", metavar="N", min=1,
        help="Only the first N tasks of the selection (after --sample; each sample of a "
             "dataset task counts as one). [default: every task]")] = None,
    sample: Annotated[int | None, Option("--sample", metavar="N", min=1,
        help="N tasks of the selection drawn at random with --seed (the same seed draws the "
             "same tasks; each sample of a dataset task counts as one). [default: every "
             "task]")] = None,
    sample_id: Annotated[list[str] | None, Option("--sample-id", metavar="ID",
        help="Only this sample of the dataset tasks selected (repeatable; before --sample "
             "and --limit). [default: every sample]")] = None,
    dry_run: Annotated[bool, Option("--dry-run",
        help="Print the plan (attempts per model, lanes, an ETA from past results of the "
             "same task, model and driver in the results folder) and run nothing.")
                       ] = False,
    allow_identical: Annotated[bool, Option("--allow-identical",
        help="With --runs > 1 at temperature 0, repeat the greedy answer (timings vary, "
             "answers do not). Without it and without --temperature, repeats of a runtime "
             f"are samples: a task with no temperature of its own is sent "
             f"{SAMPLING_TEMPERATURE} (seed + run per run), as repeats are in Inspect AI and "
             "lm-eval-harness; speed and context tasks keep theirs (see docs/results.md).")
                               ] = False,
    max_errors: Annotated[int | None, Option("--max-errors", metavar="N", min=0,
        help="Stop the run once N attempts end in an error that is not the model's (server, "
             "network, agent, BenchRig: docs/results.md#errors), and say how to resume; 0 "
             "never stops. [default: 10% of the attempts, at least "
             f"{MIN_MAX_ERRORS} — the proportion Inspect AI's --fail-on-error takes]")
                          ] = None,
    concurrency: Annotated[str | None, Option("--concurrency", metavar="N,N,...",
        help="--suite load: the concurrency levels of the sweep, e.g. 1,2,4,8 (with "
             "--saturation: the highest). [default: the task's, else 1,2,4,8]")] = None,
    rate: Annotated[str | None, Option("--rate", metavar="R,R,...",
        help="--suite load: sweep request rates (per second) instead, e.g. 0.5,1,2.")] = None,
    arrivals: Annotated[Arrivals | None, Option("--arrivals",
        help="--suite load with --rate: evenly spaced or Poisson arrivals (seeded by "
             "--seed). [default: the task's, else constant]")] = None,
    slo: Annotated[str | None, Option("--slo", metavar="NAME=MS,...",
        help="--suite load: goodput counts the requests meeting all of these: ttft_ms, "
             "itl_ms (a request's mean: (E2E − TTFT) ÷ (tokens − 1)), e2e_ms; e.g. "
             "ttft_ms=500,itl_ms=50.")] = None,
    saturation: Annotated[bool, Option("--saturation",
        help="--suite load: double the concurrency from 1 until the throughput stops "
             "growing (the knee).")] = False,
    requests: Annotated[int | None, Option("--requests", metavar="N", min=1,
        help="--suite load: measured requests per level. [default: the task's]")] = None,
    duration: Annotated[float | None, Option("--duration", metavar="S", min=0.001,
        help="--suite load: seconds per level; no request starts after it. "
             "[default: the task's]")] = None,
    warmup: Annotated[int | None, Option("--warmup", metavar="N", min=0,
        help="--suite load: requests sent first at each level, recorded apart. "
             "[default: the task's, else 2]")] = None,
) -> None:
    """Run tasks on models with each driver; write one result file per attempt; print the
    per-model, per-agent table."""
    from benchrig.cli.load import is_load
    if is_load(suite, tasks):  # LOAD HOOK (issue 26): a sweep is not one planned attempt
        # (docs/writing-a-suite.md#a-suite-that-is-not-one-attempt)
        from benchrig.cli.load import run_load
        from benchrig.load.sweep_plan import Given

        ignored = [name for name, given in (
            ("--runs", runs != 1), ("--jobs", jobs != 1), ("--resume", resume),
            ("--retry-errors", retry_errors), ("--dry-run", dry_run),
            ("--executor", executor != "local")) if given]
        if ignored:
            raise UsageError(f"--suite load: {', '.join(ignored)} do not apply to a sweep")
        return run_load(_load(tasks or [], list(suite or [])), model or ["smollm2"],
                        list(dict.fromkeys(driver or ["openai"])), provider or [],
                        Given(concurrency, rate, arrivals, requests, duration, warmup,
                              saturation, seed), slo, results_dir or paths.results_dir(),
                        max_tokens, temperature, stored(label) if label else None)
    from benchrig import sandbox
    from benchrig.config import load_config
    from benchrig.execute.plan import picked, repeats, sized

    out_dir = results_dir or paths.results_dir()
    agents = list(dict.fromkeys(driver or ["llamacpp"]))
    chosen, engines, confinement = _selected(tasks or [], [*(suite or []), *(pack or [])],
                                             out_dir, agents, require_isolation)
    chosen = sized(picked(chosen, sample_id or []), limit, sample, seed)
    models = model or ["smollm2"]
    given = _providers(agents, provider or [], models)
    # per agent: a runtime's greedy repeats are sampled, an agent's are not
    repeated = {agent: repeats(chosen, runs, engines[agent].kind, temperature,
                               allow_identical) for agent in agents}
    settings_file = load_config(config)
    from benchrig.orchestrate.runner import Overrides

    overrides = Overrides(temperature, max_tokens, context_size, threads, think, seed)
    lineup = Lineup(engines, given, repeated)
    if dry_run:  # nothing contacted, launched or written
        _say_repeats(repeated, runs)
        _dry_run(_plan(chosen, models, runs, out_dir, lineup, retry_errors and not resume),
                 lineup, overrides, settings_file, out_dir, jobs)
        return
    for agent in agents:  # every (driver, provider, model) checked before anything runs
        for name in models:
            engines[agent].preflight(name, given[agent])
    _say_repeats(repeated, runs)
    # The first sandbox is launched now, to boot while the runner and the report load, only
    # when the selection is what runs: --resume and --retry-errors first read the folder (it
    # may leave nothing to run), and Ray's workers judge in pools of their own. Otherwise
    # the pool is told its count once the attempts are known (`expect`), and launches then.
    known = not resume and not retry_errors and executor == "local"
    sandboxes = sandbox.SandboxPool(confinement, expected=int(known and any(
        t.check_type == "tests" for t in chosen)))
    sandboxes.warm()
    from benchrig.checks import load_checks

    # every check this run needs loads before anything runs or is written: a plugin that
    # cannot load stops the run here (the runner's own call, before each driver, is cached)
    load_checks({t.check_type for t in chosen if t.check_type}
                if all(e.kind == "replay" for e in engines.values()) else None)
    from benchrig.packs.scores import pack_report, pack_tasks
    from benchrig.report import render

    plan = _plan(chosen, models, runs, out_dir, lineup, retry_errors and not resume)
    if not plan:
        return
    results = _attempts(plan, lineup, overrides, settings_file, out_dir,
                        tuple(pass_env or ()), sandboxes,
                        Matrix(jobs, resume, retry_errors, stored(label) if label else None,
                               executor, ray_address, max_errors))
    if not results:  # resumed, and every attempt already had its result
        return
    echo("")
    echo(render(results, "table", packs=pack_tasks()), nl=False)  # a pack: its own line
    echo(pack_report(results), nl=False)
    if any(r["result"] in ("fail", "error") for r in results):
        raise Exit(1)


@dataclass(frozen=True)
class Lineup:
    """The drivers of a run, by the name the user gave (in --driver order), with each one's
    provider and what is done about its greedy repeats (task id → sampled | identical)."""

    engines: dict[str, Driver]
    providers: dict[str, str | None]
    repeats: dict[str, dict[str, str]]


def _providers(agents: list[str], given: list[str], models: list[str]
               ) -> dict[str, str | None]:
    """Each driver's provider (see plan.providers); a default chosen for one is said on
    stderr (`local` for pi on the embedded model)."""
    from benchrig.drivers import known
    from benchrig.execute.plan import LOCAL_PROVIDER, providers

    chosen = providers(agents, given, models, known)
    for agent, value in chosen.items():
        if value == LOCAL_PROVIDER and value not in given and f"{agent}={value}" not in given:
            info(f"{agent}: provider {value} (the embedded model, served by BenchRig)")
    return chosen


def _selected(selectors: list[str], suites: list[str], out_dir: Path, agents: list[str],
              require_isolation: bool
              ) -> tuple[list[TaskSpec], dict[str, Driver], Confinement | None]:
    """The tasks chosen, the driver, and the sandbox's confinement (None when no candidate
    code will run and isolation is not required); refused here, before anything runs, when
    the selection is empty or isolation is required and missing."""
    from benchrig import sandbox
    from benchrig.drivers import get_driver
    from benchrig.resultio.files import check_results_dir

    check_results_dir(out_dir)
    chosen = _load(selectors, suites)
    if not chosen:
        raise BenchRigError("no task matches the selection")
    engines = {agent: get_driver(agent) for agent in agents}
    names: dict[str, str] = {}
    for agent, engine in engines.items():  # results and --resume know a driver by its name
        if names.setdefault(engine.name, agent) != agent:
            raise UsageError(f"--driver {names[engine.name]} and --driver {agent} are the "
                             f"same driver ({engine.name}): give it once")
    if any(engine.kind == "agent" for engine in engines.values()):
        from benchrig.drivers import confine
        _require(confine.warning(confine.detect()), require_isolation)
    confinement = None  # detected only when candidate code will run, or isolation is required
    if require_isolation or any(t.check_type == "tests" for t in chosen):
        confinement = sandbox.detect()
        _require(sandbox.warning(confinement), require_isolation)
    return chosen, engines, confinement


Planned = list[tuple[str, tuple["TaskSpec", str, int]]]  # (driver as named, (task, model, run))


def _plan(chosen: list[TaskSpec], models: list[str], runs: int, out_dir: Path,
          lineup: Lineup, retry_errors: bool) -> Planned:
    """Every (driver, (task, model, run index)) of the selection, one matrix; with
    --retry-errors only those whose latest result is an error (said on stderr; none:
    nothing to run)."""
    from benchrig.execute.plan import ordered
    from benchrig.orchestrate.runner import matrix

    if not retry_errors:
        return ordered({agent: list(matrix(chosen, models, runs))
                        for agent in lineup.engines}, models)
    plan = ordered({agent: _errored(chosen, models, agent, lineup.providers[agent], out_dir)
                    for agent in lineup.engines}, models)
    if not plan:
        info(f"nothing to retry: no attempt of this selection in {out_dir} ends in an error")
    else:
        info(f"retrying {len(plan)} attempt{'s' if len(plan) != 1 else ''} whose latest "
             f"result is an error")
    return plan


def _specs(plan: Planned, lineup: Lineup, overrides: Overrides, config: Config,
           out_dir: Path, pass_env: tuple[str, ...] = (), label: str | None = None,
           jobs: int = 1) -> list[AttemptSpec]:
    """The plan as attempt descriptions, as the library builds them (benchrig.api)."""
    from benchrig.api import planned, settings_of

    return planned(plan, lineup.engines, lineup.providers,
                   {agent: settings_of(overrides, config, lineup.repeats[agent])
                    for agent in lineup.engines}, out_dir, pass_env, label, jobs)


def _attempts(plan: Planned, lineup: Lineup, overrides: Overrides, settings_file: Config,
              out_dir: Path, pass_env: tuple[str, ...], sandboxes: SandboxPool,
              how: Matrix) -> list[dict[str, Any]]:
    """The plan's attempts run by the executor (see benchrig/execute), each verdict line
    printed as it is recorded; the results, in completion order. Ctrl-C: a one-line note
    of how far it got and how to resume, exit 130."""
    from benchrig.attempts import unit_of
    from benchrig.core.task import sandboxed
    from benchrig.execute import LocalExecutor, Slot
    from benchrig.execute.folder import held
    from benchrig.orchestrate.runner import (
        Produced,
        UnrecordedAttempt,
        perform,
        planned_notes,
        record,
    )

    specs = _specs(plan, lineup, overrides, settings_file, out_dir, pass_env, how.label,
                   how.jobs)
    results: list[dict[str, Any]] = []
    with held(out_dir) as removed:
        if removed:
            info(f"removed {len(removed)} half-written file(s) an interrupted run left in "
                 f"{out_dir}")
        if how.resume:
            specs = _resumed(specs, out_dir, how.retry_errors)
            if not specs:
                sandboxes.close()
                return results
        sandboxes.expect(sandboxed(spec.task for spec in specs)
                         if how.executor == "local" else 0)
        limit = error_limit(how.max_errors, len(specs))
        errors = 0
        with RunProgress(len(specs)) as bar, sandboxes:
            def work(spec: AttemptSpec, slot: Slot) -> tuple[int, Produced]:
                return slot.in_flight, perform(spec, slot, lineup.engines[spec.agent],
                                               sandboxes)

            def done(spec: AttemptSpec, outcome: tuple[int, Produced]) -> None:
                nonlocal errors
                in_flight, produced = outcome
                notes = planned_notes(spec, in_flight, lineup.repeats[spec.agent])
                try:
                    attempt = record(produced, out_dir, spec.run_index, notes)
                except UnrecordedAttempt as exc:  # counted as an error; the run goes on
                    bar.advance("error")
                    error(str(exc))
                    results.append(exc.result)
                    return
                r = attempt.result
                bar.advance(r["result"])
                echo(verdict_line(unit_of(spec.task.id, spec.task.sample_id), spec.model,
                                  spec.agent, r, str(attempt.path)))
                results.append(r)
                if r["result"] == "error" and not counts_against_model(r):
                    errors += 1
                    if limit is not None and errors >= limit:
                        raise TooManyErrors

            def watch(spec: AttemptSpec) -> AttemptLine:
                shown = printable(unit_of(spec.task.id, spec.task.sample_id))
                return bar.attempt(f"[{spec.index + 1}/{len(specs)}] {shown} · "
                                   f"{printable(spec.model)} · {printable(spec.agent)}")

            try:
                if how.executor == "ray":
                    from benchrig.execute.raycluster import RayExecutor
                    from benchrig.orchestrate import remote

                    RayExecutor(how.jobs, how.ray_address, remote.lost).run(
                        specs, remote.attempt, done, watch)
                else:
                    LocalExecutor(how.jobs).run(specs, work, done, watch)
            except KeyboardInterrupt:
                bar.close()
                again = _resume_command()
                info(f"interrupted after {bar.done}/{len(specs)}"
                     + (f"; resume with {again}" if again else ""))
                raise Exit(130) from None
            except TooManyErrors:
                bar.close()
                again = _resume_command(retry_errors=True)
                error(f"stopped after {errors} errors that are not the model's "
                      f"(--max-errors {limit}), {bar.done}/{len(specs)} attempts recorded: "
                      "see the error lines above; fix the cause, then "
                      + (f"resume with {again}" if again else "run it again"))
                raise Exit(1) from None
    _say_llama_log()
    return results


def _say_llama_log() -> None:
    """How many warnings llama.cpp logged and BenchRig kept off the terminal (an aborted
    generation logs a few): counted, never raw (benchrig/local/llamalog.py)."""
    llamalog = sys.modules.get("benchrig.local.llamalog")  # loaded only with a local model
    if llamalog is None or not llamalog.lines() or llamalog.shown():
        return
    info(f"llama.cpp logged {llamalog.lines()} warning line(s), not shown "
         f"({llamalog.SHOW_ENV}=1 shows them)")


@dataclass(frozen=True)
class Matrix:
    """How `benchrig run` runs its plan: --jobs, --resume, --retry-errors, --label,
    --executor, --ray-address."""

    jobs: int = 1
    resume: bool = False
    retry_errors: bool = False
    label: str | None = None
    executor: str = "local"  # or ray (benchrig/execute/raycluster.py)
    ray_address: str | None = None
    max_errors: int | None = None  # None: error_limit's default


class TooManyErrors(Exception):
    """Raised from the recording callback: the executor stops every attempt in flight."""


def error_limit(given: int | None, attempts: int) -> int | None:
    """How many errors not of the model's doing stop a run (None: never)."""
    if given is None:
        return max(MIN_MAX_ERRORS, math.ceil(attempts * MAX_ERRORS_FRACTION))
    return given or None


def _resumed(specs: list[AttemptSpec], out_dir: Path, retry_errors: bool
             ) -> list[AttemptSpec]:
    """The attempts without a result in `out_dir` yet (said on stderr)."""
    from benchrig.execute.resume import remaining
    from benchrig.resultio.files import load_results

    left = remaining(specs, load_results([out_dir]).results, retry_errors)
    info(f"resuming: {len(specs) - len(left)} of {len(specs)} attempts already have a "
         f"result in {out_dir}; {len(left)} to run")
    return left


def _resume_command(retry_errors: bool = False) -> str | None:
    """The command line that was run, with --resume (and --retry-errors: the errors' attempts
    run again): what continues it (None for scripts/runner.py, which runs one attempt and
    has no --resume)."""
    import shlex

    program = Path(sys.argv[0]).name
    if program not in ("benchrig", "__main__.py", "cli.py"):
        return None
    words = ["benchrig", *sys.argv[1:]]
    for flag in ("--resume", "--retry-errors") if retry_errors else ("--resume",):
        if flag not in words:
            words.append(flag)
    return shlex.join(words)


def verdict_line(task: str, model: str, driver: str, r: dict[str, Any], path: str) -> str:
    """One attempt's line on stdout; every part that came from outside made printable, so a
    candidate cannot start a line of its own or move the cursor."""
    checked = r["checks"]["total"] and r["result"] != "error"
    checks = f" ({r['checks']['passed']}/{r['checks']['total']} checks)" if checked else ""
    flag = " ⚠ truncated" if r["truncated"] else ""
    return (f"{printable(task)} {printable(model)} {printable(driver)}: {r['result']}{checks}"
            f"{flag} — {printable(str(r['notes']))} → {printable(path)}")


def _errored(chosen: list[TaskSpec], models: list[str], driver: str, provider: str | None,
             out_dir: Path) -> list[tuple[TaskSpec, str, int]]:
    """(task, model, run index) of each attempt whose latest result in `out_dir` is an error."""
    from benchrig.attempts import errored, unit_of
    from benchrig.resultio.files import load_results

    by_unit = {unit_of(task.id, task.sample_id): task for task in chosen}
    keys = errored(load_results([out_dir]).results, {t.id for t in chosen}, set(models),
                   driver, provider)
    return [(by_unit[key], model, run) for key, model, run in keys if key in by_unit]


def _require(note: str | None, required: bool) -> None:
    """Warn once about a confinement gap (`note`); refuse it if isolation is required."""
    if note is None:
        return
    if required:
        raise UsageError(f"--require-isolation: {note}")
    warn(note)


def _say_repeats(per_agent: dict[str, dict[str, str]], runs: int) -> None:
    """What is done about --runs that would repeat one greedy answer, said before the run."""
    found = {task: how for repeated in per_agent.values() for task, how in repeated.items()}
    sampled = sum(v == "sampled" for v in found.values())
    identical = len(found) - sampled
    if sampled:
        info(f"--runs {runs} at temperature 0 would repeat one answer: {sampled} task"
             f"{'s' if sampled != 1 else ''} sampled at temperature {SAMPLING_TEMPERATURE}, "
             "seed + run per run (--temperature T, or --allow-identical for greedy repeats)")
    if identical:
        info(f"--runs {runs} at temperature 0: {identical} task{'s' if identical != 1 else ''}"
             " repeat one greedy answer (timings vary, verdicts do not)")


def _dry_run(plan: Planned, lineup: Lineup, overrides: Overrides, config: Config,
             out_dir: Path, jobs: int) -> None:
    """The plan on stdout; nothing is run, checked or written."""
    from benchrig.execute.plan import describe
    from benchrig.resultio.files import load_results

    specs = _specs(plan, lineup, overrides, config, out_dir, jobs=jobs)
    past = load_results([out_dir]).results if out_dir.is_dir() else []
    echo(describe(specs, past, jobs), nl=False)
