"""`benchrig run --suite load`: the load suite's own path through `run` (issue 26; a sweep is
not one planned attempt, docs/writing-a-suite.md): every load task's sweep, each level's line
printed as it is recorded, then the curves."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typer import Exit, echo

from benchrig.core.errors import UsageError
from benchrig.textsafe import printable
from benchrig.ui import info

if TYPE_CHECKING:
    from benchrig.core.task import TaskSpec
    from benchrig.load.sweep_plan import Given

OLLAMA_DEFAULT = "http://127.0.0.1:11434"


def is_load(suites: list[str] | None, selectors: list[str] | None) -> bool:
    """Whether the command line asks for the load suite, by name or by naming a load task
    (which the ordinary path would run as one plain request)."""
    if "load" in (suites or []):
        return True
    if not selectors:
        return False
    from benchrig.cli.app import _load

    return any(task.suite == "load" for task in _load(selectors, list(suites or [])))


def base_url(driver: str, provider: str | None) -> str:
    """The OpenAI-compatible base URL the load client sends to (`…/v1`)."""
    if driver == "openai":
        if not provider:
            raise UsageError("--suite load --driver openai needs --provider URL (an "
                             "OpenAI-compatible base URL such as benchrig serve's "
                             "http://127.0.0.1:PORT/v1)")
        return provider
    if driver == "ollama":
        return (provider or os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT).rstrip("/") + "/v1"
    raise UsageError(f"--suite load runs against a server: --driver openai --provider URL "
                     f"(benchrig serve's, vLLM's, llama.cpp's) or --driver ollama, not "
                     f"{printable(driver)}")


def run_load(tasks: list[TaskSpec], models: list[str], drivers: list[str],
             providers: list[str], given: Given, slo_text: str | None, out_dir: Path,
             max_tokens: int | None, temperature: float | None, label: str | None) -> None:
    """Each load task's sweep on each model and driver; exit 1 when a level ended in an
    error (no request completed)."""
    from benchrig.load.distributions import parse_slo
    from benchrig.load.sweep import Target, run_sweep
    from benchrig.load.sweep_plan import levels, prompts
    from benchrig.orchestrate.runner import Overrides, settings_for
    from benchrig.report.load_curves import render_curves
    from benchrig.resultio.files import check_results_dir

    others = sorted({t.id for t in tasks if t.suite != "load"})
    if others:
        raise UsageError(f"--suite load runs load tasks only; not {', '.join(others[:3])}")
    if len(providers) > 1:
        raise UsageError("--suite load: give one --provider")
    try:
        slo = parse_slo(slo_text or "")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_results_dir(out_dir)
    planned = [(task, levels(task, given)) for task in tasks]  # refused before any request
    results: list[dict[str, Any]] = []
    for driver in drivers:
        url = base_url(driver, providers[0] if providers else None)
        for model in models:
            for task, sweep in planned:
                settings = settings_for(task, Overrides(temperature, max_tokens,
                                                        seed=given.seed), model=model)
                spec = task.frontmatter.get("load") or {}
                extra = {"ignore_eos": True} if spec.get("ignore_eos") else {}
                info(f"{task.id} · {printable(model)} · {printable(url)}: "
                     f"{len(sweep)} level{'s' if len(sweep) != 1 else ''}"
                     + (" (saturation: stops at the knee)" if given.saturation else ""))
                target = Target(model, driver, driver, providers[0] if providers else None,
                                url, os.environ.get("OPENAI_API_KEY") if driver == "openai"
                                else None)  # as the openai driver: from the environment only
                try:
                    attempts = run_sweep(
                        task, target, settings, sweep, prompts(task, given.seed), slo,
                        out_dir, given.saturation, extra, label,
                        lambda a: echo(f"{printable(a.result['task'])} "
                                       f"{printable(a.result['model'])}: "
                                       f"{a.result['result']} — "
                                       f"{printable(a.result['notes'])} → "
                                       f"{printable(str(a.path))}"))
                except KeyboardInterrupt:
                    info("interrupted: every finished level is recorded in "
                         f"{printable(str(out_dir))}")
                    raise Exit(130) from None
                results.extend(a.result for a in attempts)
    echo("")
    echo(render_curves(results), nl=False)
    if any(r["result"] == "error" for r in results):
        raise Exit(1)
