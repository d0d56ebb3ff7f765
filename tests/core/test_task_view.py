"""A driver is handed a view of the task: the prompt and its limits, never the hidden tests, the
expected answer or the check's patterns. Proved on what the runner really gives a driver, by
walking everything reachable from the request it receives."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import DriverError
from benchrig.core.task import TaskSpec
from benchrig.drivers.base import DriverRequest
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import TASKS


class Spy:
    """A driver that keeps the request it is given and answers nothing."""

    name, kind = "spy", "agent"

    def __init__(self) -> None:
        self.requests: list[DriverRequest] = []

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> Any:
        self.requests.append(request)
        raise DriverError("infra", "the spy only looks")


def reachable(value: Any, seen: set[int] | None = None) -> Iterator[Any]:
    """Every value reachable from `value`: fields, attributes, keys, items."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    yield value
    if isinstance(value, str | bytes | int | float | Path) or value is None:
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        children: list[Any] = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, Mapping):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple | set | frozenset):
        children = list(value)
    else:
        children = list(getattr(value, "__dict__", {}).values())
    for child in children:
        yield from reachable(child, seen)


def request_for(task: TaskSpec, tmp_path: Path) -> DriverRequest:
    spy = Spy()
    run_attempt(task, "m", spy, None, settings_for(task, Overrides()), tmp_path / "results")
    [request] = spy.requests
    return request


@pytest.mark.parametrize("task_id", ["lru-cache", "mislabeled-boxes"])
def test_a_driver_cannot_reach_the_hidden_tests_or_the_expected_answer(
        task_id: str, tmp_path: Path) -> None:
    task = load_task(TASKS / f"{task_id}.md")
    request = request_for(task, tmp_path)
    values = list(reachable(request))
    texts = [v for v in values if isinstance(v, str)]
    secrets = [task.test_source] if task.test_source else [
        str(task.frontmatter["expected"]), *task.check["patterns"]]
    assert secrets
    for secret in secrets:
        assert not any(secret in text for text in texts), secret[:80]
    assert not any(isinstance(v, TaskSpec) for v in values)
    # the task's file and its tests are not named; their folders are given only to be hidden
    files = [p for p in (task.path, task.test_path) if p is not None]
    assert not any(isinstance(v, Path) and v in files for v in values)
    assert set(task.folders) <= set(request.hidden_paths)
    # what drivers use is there
    assert request.task.id == task.id and request.task.solution_file == task.solution_file
    assert request.task.body == task.body
