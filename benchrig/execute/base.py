"""The executor contract: a plan of frozen attempt descriptions in, `work` run on each, the
parent told of each outcome (and only the parent writes the results folder).

How an executor is used (benchrig/cli.py does this for `benchrig run`):

    executor.run(plan, work, done, watch)

- `plan`: `AttemptSpec`s, plain frozen data that pickles (the task, model, driver *name*,
  provider, settings, run index, label, and the scheduling constraints `lane` and
  `exclusive`), so an attempt can be sent to a thread, a process or another machine.
- `work(spec, slot)`: runs one attempt where the executor chooses and returns plain,
  picklable data (the runner's `Produced`: the result and its transcript lines). It never
  writes into the results folder. For an executor that leaves this process, `work` must be
  a module-level function (`benchrig.orchestrate.remote.attempt`, around `runner.perform`) that
  builds its own driver and sandbox pool from the spec.
- `done(spec, outcome)`: called in the thread that called `run`, one call at a time, as each
  attempt finishes (in completion order): it records the result (`runner.record`), prints
  its line and advances the progress bar. The executor never calls it after an interrupt.
- `watch(spec)`: the `Progress` the attempt reports its phases to; an executor that cannot
  carry it to the worker gives `SilentProgress()` instead.
- `Slot.node`: where the attempt runs when the executor knows it is not this process (a
  Ray node: host, node id, that node's machine block), so `work` can record it.

What every executor guarantees:
- at most `jobs` attempts in flight; attempts with the same `lane` never overlap (one
  in-process model at a time; where workers are processes of their own, as with Ray, in
  one worker at a time); an `exclusive` attempt runs with nothing else in flight,
  and the plan's order is kept around it (what comes before it finishes first, what
  comes after starts after it);
- each attempt is told in `Slot.in_flight` how many attempts were in flight when it
  started, itself included (recorded in its result as `settings.in_flight`);
- an exception from `work` is BenchRig's own failure: no further attempt starts and it is
  raised from `run`; KeyboardInterrupt (Ctrl-C) stops starting attempts and is raised from
  `run` within seconds: attempts still in flight are stopped so that they clean up after
  themselves (agent processes, a served model) and are never recorded, so nothing
  half-done reaches the results folder and `--resume` runs them again. The stop is
  cooperative (`core.deadline.Stop`): `work` ends because its deadlines end and what it
  registered with `closing_on_stop` is closed, never by an exception raised into it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.drivers.base import Progress

T = TypeVar("T")


@dataclass(frozen=True)
class AttemptSpec:
    """One attempt of a plan, described by plain frozen data that pickles: what a worker in
    this process, another process or another machine needs to run it."""

    index: int  # its place in the plan, 0-based
    task: TaskSpec
    model: str
    driver: str  # the registered driver's name (benchrig.drivers.get_driver)
    agent: str  # as the user named the driver (recorded as the result's `agent`)
    provider: str | None
    settings: Settings
    run_index: int  # which of the --runs this is: run k stays run k when resumed
    results_dir: Path  # hidden from agents; written only by the parent
    pass_env: tuple[str, ...] = ()
    label: str | None = None
    jobs: int = 1  # the run's --jobs, recorded as settings.jobs
    lane: str | None = None  # attempts of one lane never overlap (an in-process model)
    exclusive: bool = False  # nothing else in flight while it runs (speed, context suites)


@dataclass(frozen=True)
class Slot:
    """What an attempt is told as it starts."""

    in_flight: int  # attempts in flight when it started, itself included
    progress: Progress
    node: Mapping[str, Any] | None = None  # another machine's: host, node_id, machine


Work = Callable[[AttemptSpec, Slot], T]
Done = Callable[[AttemptSpec, T], None]
Watch = Callable[[AttemptSpec], Progress]


class Executor(Protocol):
    """Runs a plan of attempts under the guarantees in this module's docstring."""

    jobs: int

    def run(self, plan: Sequence[AttemptSpec], work: Work[T], done: Done[T],
            watch: Watch | None = None) -> None:
        """Run every attempt of `plan` with `work`; `done` each outcome in the caller's
        thread; raise KeyboardInterrupt at once when interrupted."""
