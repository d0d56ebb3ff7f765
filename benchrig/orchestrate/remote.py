"""Attempts run away from the head (an executor's `work` and `lost` as module-level
functions): the driver and the sandbox pool built once per worker process, the node the
attempt ran on recorded in its environment block."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from benchrig.core.errors import DriverError
from benchrig.core.transcript import DriverOutput
from benchrig.drivers import get_driver
from benchrig.drivers.base import Driver, DriverRequest
from benchrig.execute.base import AttemptSpec, Slot
from benchrig.orchestrate.runner import Produced, perform, produce
from benchrig.sandbox import SandboxPool

_DRIVERS: dict[str, Driver] = {}
_SANDBOXES: list[SandboxPool] = []  # this process's pool (closed at exit by the pool itself)


def _driver(name: str) -> Driver:
    if name not in _DRIVERS:
        _DRIVERS[name] = get_driver(name)
    return _DRIVERS[name]


def _sandboxes() -> SandboxPool:
    if not _SANDBOXES:  # confinement detected on this node, when first needed
        _SANDBOXES.append(SandboxPool())
    return _SANDBOXES[0]


def attempt(spec: AttemptSpec, slot: Slot) -> tuple[int, Produced]:
    """Run one attempt here (on a worker): the same outcome as the local executor's work,
    its result naming the node."""
    return slot.in_flight, on_node(perform(spec, slot, _driver(spec.driver), _sandboxes()),
                                   slot.node)


def lost(spec: AttemptSpec, slot: Slot, message: str) -> tuple[int, Produced]:
    """The outcome of an attempt whose worker died under it, made on the head: an infra
    error (retried by --retry-errors and --resume), with the environment of the node it
    was on (its machine block as that node reported it), never the head's."""
    produced = produce(spec.task, spec.model, _Lost(_driver(spec.driver), message),
                       spec.provider, spec.settings, spec.results_dir, spec.agent,
                       None, spec.pass_env, None)
    if slot.node is not None:
        machine = dict(slot.node.get("machine") or {})
        environment = {**machine, "runtime": {"name": spec.driver, "version": None}}
        produced = dataclasses.replace(produced,
                                       result={**produced.result, "environment": environment})
    return slot.in_flight, on_node(produced, slot.node)


def on_node(produced: Produced, node: Mapping[str, Any] | None) -> Produced:
    """`produced` with the node it ran on in its environment block (`environment.node`)."""
    if node is None:
        return produced
    environment = {**produced.result["environment"],
                   "node": {"host": node.get("host"), "node_id": node.get("node_id")}}
    return dataclasses.replace(produced, result={**produced.result, "environment": environment})


class _Lost:
    """A stand-in for the driver whose worker died: it fails as an infra error."""

    def __init__(self, driver: Driver, message: str) -> None:
        self.name, self.kind, self.message = driver.name, driver.kind, message

    def preflight(self, model: str, provider: str | None) -> None:
        """Nothing to check: it never runs a model."""

    def run(self, request: DriverRequest) -> DriverOutput:
        raise DriverError("infra", self.message)
