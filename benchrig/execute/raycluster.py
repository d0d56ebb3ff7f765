"""RayExecutor: the attempts of a plan on a Ray cluster, each where its runtime is served;
outcomes handed to the caller's thread, which alone writes the results folder.

Ray schedules, BenchRig only asks. A node advertises what it serves as Ray custom resources
(docs/scale-out.md): `runtime:<driver>` is how many attempts of that runtime it runs at
once, `model:<name>` that it serves the model. Each attempt runs in an actor (a worker
process) that holds one `runtime:<driver>` and a sliver of `model:<name>`: one attempt at a
time per actor, the driver built once per actor, an in-process model loaded once per actor.
Up to `jobs` attempts are in flight, under the same plan order and exclusive attempts as
the local executor; lanes are the actors themselves (one attempt at a time per process),
so in-process models run side by side on different workers.

Ray is imported only when this executor runs (`pip install '.[ray]'`).
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import secrets
import shutil
import socket
import tempfile
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import TracebackType
from typing import Any, TypeVar

from benchrig.core.errors import BenchRigError, UsageError
from benchrig.drivers.base import SilentProgress
from benchrig.environment import machine
from benchrig.execute.base import AttemptSpec, Done, Slot, Watch, Work
from benchrig.execute.local import Schedule, interrupts_held
from benchrig.textsafe import printable, type_name

T = TypeVar("T")
# The outcome of an attempt whose worker died under it (an infra error), made on the head.
Lost = Callable[[AttemptSpec, Slot, str], T]
Key = tuple[str, str]  # (driver, model): the actors that can run an attempt

MODEL_SHARE = 0.001  # of `model:<name>`: only that a node serves the model matters
INSTALL_HINT = "pip install '.[ray]'"
CONNECT_S = 5.0  # for the cluster's address to answer at all
NODES_CHECK_S = 5.0  # with nothing finished for this long, the live nodes are read again
STARTS_BEFORE_GIVING_UP = 3  # workers of one kind that died before answering where they are


def _ray() -> Any:
    """The ray module, imported when first used (typed or not, as installed)."""
    return importlib.import_module("ray")


def runtime_resource(driver: str) -> str:
    return f"runtime:{driver}"


def model_resource(model: str) -> str:
    return f"model:{model}"


def asks(key: Key) -> dict[str, float]:
    """The Ray resources an actor for (driver, model) holds for its life."""
    driver, model = key
    return {runtime_resource(driver): 1.0, model_resource(model): MODEL_SHARE}


def local_resources(plan: Sequence[AttemptSpec], jobs: int) -> dict[str, float]:
    """What this machine advertises when the executor starts Ray itself: every runtime and
    model of the plan; an in-process model (a lane) one worker at a time, as locally."""
    found: dict[str, float] = {}
    for spec in plan:
        found[runtime_resource(spec.driver)] = 1.0 if spec.lane else float(jobs)
        found[model_resource(spec.model)] = 1.0
    return found


def answering(address: str) -> None:
    """Refuse at once an address of the form HOST:PORT where nothing listens (Ray itself
    keeps retrying for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return  # another form (ray://…, auto): Ray's own to judge
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S).close()
    except OSError as exc:
        raise UsageError(f"cannot join the Ray cluster at {printable(address)}: nothing "
                         f"answers there ({type_name(exc)}: {printable(str(exc))})") from None


def unserved(key: Key) -> str:
    return (f"no live node of the Ray cluster advertises both {runtime_resource(key[0])} "
            f"and {model_resource(key[1])}")


def capacity(key: Key, nodes: Sequence[Mapping[str, Any]]) -> int:
    """How many actors for `key` the live nodes can hold at once."""
    runtime, model = runtime_resource(key[0]), model_resource(key[1])
    return sum(int(node["Resources"].get(runtime, 0)) for node in nodes
               if node.get("Alive") and node["Resources"].get(model, 0) >= MODEL_SHARE)


class AttemptWorker:
    """The actor's body: where it runs, and attempts one at a time."""

    def where(self) -> dict[str, Any]:
        ray = _ray()

        return {"host": socket.gethostname(), "node_id": ray.get_runtime_context().get_node_id(),
                "pid": os.getpid(), "machine": machine()}

    def attempt(self, work: Work[T], spec: AttemptSpec, slot: Slot) -> T:
        return work(spec, slot)


@cache
def actor_class() -> Any:
    """AttemptWorker as a Ray actor class, registered once per process."""
    ray = _ray()

    return ray.remote(AttemptWorker)


@dataclass
class Worker:
    """An actor as the head sees it."""

    key: Key
    handle: Any
    where: dict[str, Any] | None = None  # None until it answered (placed and started)
    busy: AttemptSpec | None = None


@dataclass
class Flight:
    """What a pending Ray reference is: a worker's first answer, or an attempt."""

    worker: Worker
    spec: AttemptSpec | None = None
    slot: Slot | None = None


@dataclass
class Pool:
    """The run's actors, by key; `left` counts each key's attempts not finished."""

    workers: list[Worker] = field(default_factory=list)
    left: Counter[Key] = field(default_factory=Counter)
    failed_starts: Counter[Key] = field(default_factory=Counter)

    def of(self, key: Key) -> list[Worker]:
        return [w for w in self.workers if w.key == key]


@dataclass
class OwnSession:
    """A Ray started for one run: its session folder (0700, not the shared /tmp/ray) and its
    token (not ~/.ray/auth_token, which anything of the user's can read), set in this
    process's environment for Ray and its workers, and taken back at the end."""

    folder: str
    saved: dict[str, str | None]

    def close(self) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.folder, ignore_errors=True)


def own_session() -> OwnSession:
    """Ray's folder and token for a cluster this run starts (OwnSession)."""
    folder = tempfile.mkdtemp(prefix="benchrig-ray-")
    mine = {"RAY_TMPDIR": folder,
            "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    saved = {name: os.environ.get(name)
             for name in (*mine, "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH")}
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    os.environ.pop("RAY_AUTH_MODE", None)  # Ray then turns on token mode with this token
    os.environ.update(mine)
    return OwnSession(folder, saved)


class RayExecutor:
    """Runs a plan on the Ray cluster at `address` (else $RAY_ADDRESS, else a local one
    started for the run). `lost` makes the outcome of an attempt whose worker died (an infra error).

    Used as a context manager, the connection and the warm workers are kept across runs
    (bench/); otherwise each `run` stops its workers, and Ray if it started it, at its end.
    """

    def __init__(self, jobs: int = 1, address: str | None = None,
                 lost: Lost[Any] | None = None) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {jobs}")
        self.jobs, self.address, self.lost = jobs, address, lost
        self.started = False  # Ray was started by this executor: it stops it
        self.held = False
        self.pool = Pool()
        self.nodes: list[dict[str, Any]] = []
        self.own: OwnSession | None = None  # the Ray this executor started: its folder, token

    def __enter__(self) -> RayExecutor:
        self.held = True
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.held = False
        self.close()

    def connect(self, plan: Sequence[AttemptSpec]) -> None:
        """Join the cluster (or start a local one advertising the plan's resources)."""
        try:
            ray = _ray()
        except ImportError:
            raise UsageError(f"--executor ray needs Ray: {INSTALL_HINT}") from None
        if not ray.is_initialized():
            quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            address = self.address or os.environ.get("RAY_ADDRESS")
            if address:
                answering(address)
                try:
                    ray.init(address=address, **quiet)
                except (ConnectionError, ValueError, RuntimeError) as exc:
                    raise UsageError(
                        f"cannot join the Ray cluster at {printable(address)}: "
                        f"{type_name(exc)}: {printable(str(exc))} (a cluster with token "
                        f"authentication also needs RAY_AUTH_MODE=token here; see "
                        f"docs/scale-out.md)") from None
            else:  # "local": a new instance, even where another one runs
                self.own = own_session()
                # Ray warns that it turned token authentication on: that is the point
                logging.getLogger("ray._private.authentication.authentication_token_setup"
                                  ).setLevel(logging.ERROR)
                ray.init(address="local", resources=local_resources(plan, self.jobs),
                         include_dashboard=False, **quiet)
                self.started = True
        self.nodes = [node for node in ray.nodes() if node.get("Alive")]

    def close(self) -> None:
        """Stop this executor's workers, and Ray if this executor started it."""
        ray = _ray()

        for worker in self.pool.workers:
            ray.kill(worker.handle, no_restart=True)
        self.pool.workers.clear()
        if self.started:
            ray.shutdown()
            self.started = False
        if self.own is not None:
            self.own.close()
            self.own = None

    def run(self, plan: Sequence[AttemptSpec], work: Work[T], done: Done[T],
            watch: Watch | None = None) -> None:
        self.connect(plan)
        try:
            self._run(plan, work, done, watch)
        except BaseException:
            self.close()  # Ctrl-C or a failure: what is in flight is killed, never recorded
            raise
        if not self.held:
            self.close()

    def _run(self, plan: Sequence[AttemptSpec], work: Work[T], done: Done[T],
             watch: Watch | None) -> None:
        ray = _ray()

        limits = self._limits({(spec.driver, spec.model) for spec in plan})
        for key, room in limits.items():
            if not room:
                raise UsageError(f"{unserved(key)} (see docs/scale-out.md)")
        # lanes are the actors here (one attempt at a time per worker process)
        schedule = Schedule([dataclasses.replace(spec, lane=None) for spec in plan], self.jobs)
        by_index = {spec.index: spec for spec in plan}
        self.pool.left = Counter((spec.driver, spec.model) for spec in plan)
        queued: dict[Key, deque[tuple[AttemptSpec, int]]] = {key: deque() for key in limits}
        flights: dict[Any, Flight] = {}
        while schedule.left:
            for started in schedule.startable():
                spec = by_index[started.index]
                queued[(spec.driver, spec.model)].append((spec, len(schedule.running)))
            self._dispatch(queued, limits, flights, work, watch)
            if not flights:
                raise BenchRigError("the Ray executor has attempts left and none in flight")
            found, _ = ray.wait(list(flights), num_returns=1, timeout=NODES_CHECK_S)
            if not found:  # a worker that cannot be placed waits forever: are nodes gone?
                self.nodes = [node for node in ray.nodes() if node.get("Alive")]
                limits.update(self._limits(set(limits)))
                for key in limits:
                    if not limits[key] and (queued[key] or self.pool.of(key)):
                        raise BenchRigError(f"{unserved(key)} any more; the results so far "
                                            f"are written: --resume runs the rest")
                continue
            (ready,) = found
            flight = flights.pop(ready)
            if flight.spec is None:
                self._started(flight.worker, ready)
                continue
            assert flight.slot is not None
            outcome = self._outcome(flight, ready)
            flight.worker.busy = None
            schedule.finished(flight.spec)
            self.pool.left[flight.worker.key] -= 1
            with interrupts_held():
                done(flight.spec, outcome)

    def _limits(self, keys: set[Key]) -> dict[Key, int]:
        return {key: min(self.jobs, capacity(key, self.nodes)) for key in keys}

    def _dispatch(self, queued: dict[Key, deque[tuple[AttemptSpec, int]]],
                  limits: dict[Key, int], flights: dict[Any, Flight], work: Work[T],
                  watch: Watch | None) -> None:
        """Hand each queued attempt to an idle worker of its kind; start workers where
        there are too few; stop idle ones nothing waits for, so others find room."""
        ray = _ray()

        waiting = {key for key, specs in queued.items() if specs}
        # a waiting kind whose worker is not placed yet may need the room an idle one holds
        blocked = any(w.where is None and w.key in waiting for w in self.pool.workers)
        for worker in [w for w in self.pool.workers if w.busy is None and w.where
                       and w.key not in waiting
                       and (blocked or not self.pool.left[w.key])]:
            ray.kill(worker.handle, no_restart=True)
            self.pool.workers.remove(worker)
        for key in waiting:
            specs = queued[key]
            for worker in self.pool.of(key):
                if not specs:
                    break
                if worker.where is not None and worker.busy is None:
                    spec, in_flight = specs.popleft()
                    progress = watch(spec) if watch else SilentProgress()
                    progress.phase(f"on {printable(worker.where['host'])}")
                    slot = Slot(in_flight, SilentProgress(), worker.where)
                    worker.busy = spec
                    flights[worker.handle.attempt.remote(work, spec, slot)] = \
                        Flight(worker, spec, slot)
            starting = sum(w.where is None for w in self.pool.of(key))
            for _ in range(min(len(specs) - starting, limits[key] - len(self.pool.of(key)))):
                handle = actor_class().options(
                    num_cpus=0, resources=asks(key), max_restarts=0, max_task_retries=0,
                    max_concurrency=1).remote()
                worker = Worker(key, handle)
                self.pool.workers.append(worker)
                flights[handle.where.remote()] = Flight(worker)

    def _started(self, worker: Worker, ref: Any) -> None:
        """A new worker's first answer: where it is; a worker that died first is dropped
        (another is started for the waiting attempts), and too many such are a failure."""
        ray = _ray()

        try:
            worker.where = ray.get(ref)
        except ray.exceptions.RayError as exc:
            self.pool.workers.remove(worker)
            self.pool.failed_starts[worker.key] += 1
            if self.pool.failed_starts[worker.key] >= STARTS_BEFORE_GIVING_UP:
                raise BenchRigError(
                    f"Ray workers for {worker.key[0]} · {worker.key[1]} die as they start: "
                    f"{type_name(exc)}: {printable(str(exc))}") from None

    def _outcome(self, flight: Flight, ref: Any) -> Any:
        """The attempt's outcome; an infra error (`lost`) when its worker died under it."""
        ray = _ray()

        assert flight.spec is not None and flight.slot is not None
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # `work` raised: BenchRig is broken
            raise exc.as_instanceof_cause() from None
        except ray.exceptions.RayError as exc:
            self.pool.workers.remove(flight.worker)
            ray.kill(flight.worker.handle, no_restart=True)
            if self.lost is None:
                raise
            where = flight.worker.where or {}
            return self.lost(flight.spec, flight.slot,
                             f"the Ray worker on {where.get('host')} (node "
                             f"{str(where.get('node_id'))[:12]}) was lost mid-attempt: "
                             f"{type_name(exc)}")
