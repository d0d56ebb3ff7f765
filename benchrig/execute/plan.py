"""The plan of a run: every (model, task, run) as an AttemptSpec with its scheduling rules."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.core.settings import Settings, for_local_agent
from benchrig.core.task import TaskSpec
from benchrig.drivers.base import capable
from benchrig.execute.base import AttemptSpec
from benchrig.local.model import KNOWN_MODELS
from benchrig.suites import get_suite, known_suites
from benchrig.textsafe import printable

LOCAL_PROVIDER = "local"  # an agent against the embedded model, served by BenchRig
EMBEDDED_LANE = "embedded model"


@functools.cache  # a driver's class declares it: ask once per process
def _can(driver: str, capability: str) -> bool:
    """Whether the driver registered as `driver` declares `capability` (drivers.base
    CAPABILITIES); an unknown name declares none (it is refused where it is looked up)."""
    from benchrig.drivers import get_driver

    try:
        return capable(get_driver(driver), capability)
    except UsageError:
        return False


def embedded(model: str) -> bool:
    """Whether `model` names an embedded model: one BenchRig ships, or a .gguf file."""
    return model in KNOWN_MODELS or model.endswith(".gguf")


def default_provider(driver: str, provider: str | None, models: list[str]) -> str | None:
    """The provider when none is given: `local` for an agent that can use the embedded model
    when every model is one (`scripts/run.sh lru-cache smollm2` runs pi on it), else none."""
    if provider is None and models and all(map(embedded, models)) and \
            _can(driver, "local_agent"):
        return LOCAL_PROVIDER
    return provider


def providers(drivers: Sequence[str], given: Sequence[str], models: list[str],
              known: Callable[[], Collection[str]]
              ) -> dict[str, str | None]:
    """Each --driver's provider from the --provider values: `NAME=VALUE` (NAME one of the
    --driver names) is that driver's; a value without such a prefix is every other driver's
    (at most one); a driver left without either gets default_provider's. `known`: the
    function listing every driver's name, called only for a NAME=VALUE that names no
    driver of the run (listing them scans the installed packages: most runs never need to)."""
    paired: dict[str, str] = {}
    shared: list[str] = []
    for value in given:
        name, sep, rest = value.partition("=")
        if sep and name in drivers:
            if name in paired:
                raise UsageError(f"--provider {name}=…: given twice")
            paired[name] = rest
        elif sep and name in known():
            # a pair meant for a driver this run does not use
            raise UsageError(f"--provider {value!r}: {name} is not one of this run's "
                             f"--driver/--agent ({', '.join(drivers)})")
        else:
            shared.append(value)
    if len(shared) > 1:
        raise UsageError("--provider given more than once without a driver: use "
                         "--provider AGENT=VALUE for each agent that needs its own")
    return {name: default_provider(name, paired.get(name, shared[0] if shared else None),
                                   models) for name in drivers}


def ordered(plans: dict[str, list[tuple[TaskSpec, str, int]]], models: Sequence[str]
            ) -> list[tuple[str, tuple[TaskSpec, str, int]]]:
    """The keys of every driver's plan as one matrix, model-major (a model loads once), then
    in --driver order, each driver's own order kept: (driver, key) pairs."""
    rank = {model: index for index, model in enumerate(models)}
    keyed = [(agent, key) for agent, keys in plans.items() for key in keys]
    return sorted(keyed, key=lambda pair: rank.get(pair[1][1], len(rank)))  # stable


def lane(driver: str, provider: str | None) -> str | None:
    """The lane an attempt runs in: every attempt on the embedded model (in process, or an
    agent served by it) shares one, so two never share the CPU; others run freely."""
    return EMBEDDED_LANE if provider == LOCAL_PROVIDER or _can(driver, "in_process") else None


def attempt_specs(keys: Iterable[tuple[TaskSpec, str, int]], driver: str, agent: str,
                  provider: str | None, settings: Callable[[TaskSpec, str, int], Settings],
                  results_dir: Path, pass_env: tuple[str, ...] = (),
                  label: str | None = None, jobs: int = 1) -> list[AttemptSpec]:
    """The plan's (task, model, run index) keys as attempt descriptions, in their order."""
    where = lane(driver, provider)
    if provider == LOCAL_PROVIDER and _can(driver, "local_agent"):
        settings = _widened(settings)
    keys = list(keys)
    for task, _, _ in keys:
        if get_suite(task.suite).embedded_only and where != EMBEDDED_LANE:
            raise UsageError(f"{task.id}: the {task.suite} suite measures the embedded model: "
                             f"it runs on an in-process driver or an agent with provider "
                             f"{LOCAL_PROVIDER}, not on {printable(driver)}")
    return [AttemptSpec(index, task, model, driver, agent, provider,
                        settings(task, model, run), run, results_dir, pass_env, label, jobs,
                        where, get_suite(task.suite).exclusive)
            for index, (task, model, run) in enumerate(keys)]


def _widened(settings: Callable[[TaskSpec, str, int], Settings]
             ) -> Callable[[TaskSpec, str, int], Settings]:
    return lambda task, model, run: for_local_agent(settings(task, model, run))


def repeats(tasks: Iterable[TaskSpec], runs: int, kind: str, temperature: float | None,
            allow_identical: bool) -> dict[str, str]:
    """For each task whose runs would be byte-identical (more than one run, temperature 0,
    a runtime that takes the temperature, not a timing suite): what is done about it —
    `sampled` (sent core.settings.SAMPLING_TEMPERATURE) or `identical` (asked for:
    --allow-identical, or --temperature 0 given)."""
    if runs < 2 or kind != "runtime":
        return {}
    chosen: dict[str, str] = {}
    for task in tasks:
        if get_suite(task.suite).exclusive:  # their repeats measure the machine's timings
            continue
        if temperature is None and task.temperature:
            continue
        if allow_identical or temperature is not None:
            if not temperature:
                chosen[task.id] = "identical"
        else:
            chosen[task.id] = "sampled"
    return chosen


def picked(tasks: list[TaskSpec], sample_ids: list[str]) -> list[TaskSpec]:
    """The samples named by --sample-id (all tasks when none is named); UsageError naming an
    id that no sample of the selection has."""
    if not sample_ids:
        return tasks
    wanted = set(sample_ids)
    kept = [task for task in tasks if task.sample_id in wanted]
    unknown = [s for s in dict.fromkeys(sample_ids) if s not in {t.sample_id for t in kept}]
    if unknown:
        raise UsageError(f"--sample-id {printable(unknown[0])}: no sample of the selected "
                         "dataset tasks has this id")
    return kept


def sized(tasks: list[TaskSpec], limit: int | None, sample: int | None,
          seed: int) -> list[TaskSpec]:
    """--sample N (N tasks drawn with `seed`, in their order), then --limit N (the first
    N): a smaller run of the same selection, reproducible from its command line."""
    import random

    if sample is not None and sample < len(tasks):
        kept = set(random.Random(seed).sample(range(len(tasks)), sample))
        tasks = [task for index, task in enumerate(tasks) if index in kept]
    return tasks[:limit] if limit is not None else tasks


PLAN_TASKS = 30  # task ids --dry-run names


def describe(specs: list[AttemptSpec], past: list[dict[str, Any]], jobs: int) -> str:
    """The plan as --dry-run prints it: attempts per model and lane, and an ETA from the
    median wall time of past results of the same task, model, driver and provider."""
    import statistics
    from collections import Counter

    walls: dict[tuple[object, ...], list[float]] = {}
    for r in past:
        metrics = r.get("metrics")
        wall = metrics.get("wall_s") if isinstance(metrics, dict) else None
        if isinstance(wall, (int, float)):
            key = (r.get("task"), r.get("model"), r.get("driver"), r.get("provider"))
            walls.setdefault(key, []).append(float(wall))
    serial = parallel = 0.0
    known = 0
    for spec in specs:
        seen = walls.get((spec.task.id, spec.model, spec.driver, spec.provider))
        if not seen:
            continue
        known += 1
        if spec.lane is not None or spec.exclusive:
            serial += statistics.median(seen)
        else:
            parallel += statistics.median(seen)
    lines = [f"{len(specs)} attempt{'s' if len(specs) != 1 else ''}, --jobs {jobs}"]
    ids = list(dict.fromkeys(spec.task.id for spec in specs))
    lines.append(f"  tasks ({len(ids)}): {', '.join(ids[:PLAN_TASKS])}"
                 + (", …" if len(ids) > PLAN_TASKS else ""))
    several = len({s.agent for s in specs}) > 1  # a matrix of agents: one line per agent
    for (model, agent, lane_name), count in Counter((s.model, s.agent, s.lane or "free")
                                                    for s in specs).items():
        lane_text = ("one at a time (embedded model)" if lane_name == EMBEDDED_LANE
                     else f"up to {jobs} at once")
        who = f"{printable(model)} · {printable(agent)}" if several else printable(model)
        lines.append(f"  {who}: {count} attempt{'s' if count != 1 else ''}, {lane_text}")
    alone = sum(s.exclusive for s in specs)
    if alone:
        # named by their suites, the built-ins in their order (speed/context)
        order = {name: i for i, name in enumerate(known_suites())}
        timed = sorted({s.task.suite for s in specs if s.exclusive},
                       key=lambda name: (order.get(name, len(order)), name))
        lines.append(f"  {alone} {'/'.join(timed)} attempt{'s' if alone != 1 else ''} run alone")
    if known:
        eta = serial + parallel / jobs
        lines.append(f"ETA ≈ {_duration(eta)} from past results of {known} of "
                     f"{len(specs)} attempts" + (f"; {len(specs) - known} have none, not "
                                                 "counted" if known < len(specs) else ""))
    else:
        lines.append("ETA unknown: no past result of these tasks, models and drivers")
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
