"""Suites by name and drivers by capability: the plan, the runner and the task loader ask the
task's suite and the driver's declared capabilities, never a name of either."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchrig import drivers, suites
from benchrig.core.errors import TaskError, UsageError
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.drivers.base import DriverRequest
from benchrig.execute import plan
from benchrig.execute.plan import EMBEDDED_LANE, attempt_specs, default_provider, lane, repeats
from benchrig.spec import load_task
from benchrig.suites import (
    BUILTIN,
    OPT_IN,
    SUITES,
    find_suite,
    get_suite,
    known_suites,
)
from benchrig.suites.base import Suite
from benchrig.suites.shapes import single_answer
from tests.conftest import ROOT, TASKS

# a suite measuring the machine, and one measuring the embedded model itself
TIMED = Suite("timed", single_answer, exclusive=True)
EMBEDDED = Suite("embedded", single_answer, embedded_only=True)


class InProcess:
    """A plugin runtime that runs its model in BenchRig's process, as llamacpp does."""

    name, kind = "inproc", "runtime"
    in_process = True

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> None:
        raise AssertionError("never run here")


class ServedAgent(InProcess):
    """A plugin agent the gateway can serve the embedded model to."""

    name, kind = "served", "agent"
    in_process = False
    local_agent = True


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(BUILTIN, "timed", f"{__name__}:TIMED")
    monkeypatch.setitem(BUILTIN, "embedded", f"{__name__}:EMBEDDED")
    monkeypatch.setitem(drivers.BUILTIN, "inproc", f"{__name__}:InProcess")
    monkeypatch.setitem(drivers.BUILTIN, "served", f"{__name__}:ServedAgent")
    plan._can.cache_clear()
    yield
    plan._can.cache_clear()


def as_suite(task: TaskSpec, name: str) -> TaskSpec:
    from dataclasses import replace

    return replace(task, suite=name)


def settings(task: TaskSpec, model: str, run: int) -> Settings:
    return Settings(temperature=0.0, max_tokens=8, context_size=512, timeout_s=10.0)


def test_the_built_in_suites_are_found_by_name_and_agree_with_the_name_lists() -> None:
    found = [get_suite(name) for name in SUITES]
    assert [s.name for s in found] == list(SUITES) == list(known_suites())[:len(SUITES)]
    assert tuple(s.name for s in found if s.opt_in) == OPT_IN
    assert [s.name for s in found if s.exclusive] == ["speed", "context", "load"]
    assert [s.name for s in found if s.hidden_tests] == ["coding"]
    assert find_suite("nope") is None
    with pytest.raises(UsageError, match="unknown suite 'nope'; known suites: speed, coding"):
        get_suite("nope")


def test_a_plugin_suite_that_is_not_a_suite_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BUILTIN, "fake", f"{__name__}:TIMED")  # a Suite named otherwise
    with pytest.raises(UsageError, match="is not a suite named 'fake'"):
        find_suite("fake")
    monkeypatch.setitem(BUILTIN, "gone", "no_such_module_here:X")
    with pytest.raises(UsageError, match="suite 'gone': loading no_such_module_here:X failed"):
        find_suite("gone")


def test_lanes_come_from_what_a_driver_declares_not_its_name(registered: None) -> None:
    assert lane("inproc", None) == EMBEDDED_LANE  # a plugin runtime in BenchRig's process
    assert lane("served", None) is None
    assert default_provider("served", None, ["smollm2"]) == "local"
    assert default_provider("inproc", None, ["smollm2"]) is None
    assert lane("unknown-driver", None) is None  # refused where drivers are looked up


def test_a_timing_suite_runs_alone_and_is_never_resampled(registered: None) -> None:
    task = as_suite(load_task(TASKS / "bat-and-ball.md"), "timed")
    (spec,) = attempt_specs([(task, "m", 0)], "openai", "openai", "http://x", settings,
                            Path("results"))
    assert spec.exclusive and spec.lane is None
    assert repeats([task], 3, "runtime", None, False) == {}


def test_an_embedded_only_suite_is_refused_on_another_driver(registered: None) -> None:
    task = as_suite(load_task(TASKS / "bat-and-ball.md"), "embedded")
    with pytest.raises(UsageError, match="the embedded suite measures the embedded model"):
        attempt_specs([(task, "m", 0)], "openai", "openai", "http://x", settings,
                      Path("results"))
    (spec,) = attempt_specs([(task, "smollm2", 0)], "inproc", "inproc", None, settings,
                            Path("results"))
    assert spec.lane == EMBEDDED_LANE


ASKERS = [ROOT / "benchrig" / name for name in ("orchestrate/runner.py", "orchestrate/remote.py",
                                               "suites/turns.py", "spec.py",
                                               "prompt.py")]


def test_the_runner_the_plan_and_the_loader_name_no_suite() -> None:
    """No string in the runner, the executors, the plan, the task loader or the prompt names a
    built-in suite: they ask the task's suite (benchrig.suites) instead of branching on its
    name."""
    files = [*ASKERS, *sorted((ROOT / "benchrig" / "execute").glob("*.py"))]
    named = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
             for path in files for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and node.value in SUITES]
    assert named == []


def test_the_lookup_never_imports_a_suite_module() -> None:
    """The face finds built-in and plugin suites by name (importlib), like checks and drivers:
    importing benchrig.suites loads neither the built-ins nor what their shapes need."""
    face = ast.parse(Path(suites.__file__).read_text())
    imported = {n.module for n in ast.walk(face) if isinstance(n, ast.ImportFrom)}
    assert "benchrig.suites.builtin" not in imported
    assert "benchrig.suites.shapes" not in imported


def test_benchrig_toml_sets_a_plugin_suite_s_thinking(registered: None, tmp_path: Path) -> None:
    from benchrig.config import load_config

    (tmp_path / "benchrig.toml").write_text("[think]\ntimed = false\n", encoding="utf-8")
    assert load_config(cwd=tmp_path).think_default("timed") is False
    (tmp_path / "benchrig.toml").write_text("[think]\ntimd = false\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"think\.timd: unknown suite; suites: speed, coding"):
        load_config(cwd=tmp_path)


def test_the_name_lists_agree_with_what_each_suite_declares() -> None:
    """benchrig.suites' name lists stay for callers outside; the code asks the suite, so the
    two must say the same of every built-in."""
    declared = {name: get_suite(name) for name in SUITES}
    assert tuple(n for n, s in declared.items() if s.answer_scored) == suites.ANSWER_SCORED
    assert set(suites.COMPOSITE) == {n for n, s in declared.items() if s.report.composite}
    assert tuple(n for n, s in declared.items() if not s.report.timed) == suites.UNTIMED
    assert tuple(n for n, s in declared.items() if s.report.levels) == suites.LEVELS
    assert tuple(n for n, s in declared.items() if s.opt_in) == OPT_IN
    assert [n for n, s in declared.items() if s.think is False] == ["speed", "context"]
    assert list(SUITES) == sorted(SUITES, key=lambda n: declared[n].report.order)


def test_the_needle_check_asks_the_suite_whether_it_judges_by_window(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A plugin suite running a window ladder (by_window) may use the needle check; a suite
    judging one answer may not, whatever it is called. The check declares `by_window`; the
    loader asks the task's suite (a check never looks a suite up: checks/ sits below it)."""
    from benchrig import spec
    from benchrig.checks import check_problems, get_check

    assert get_check("needle").by_window
    meta = {"id": "n", "check": {"type": "needle"}}
    refused = "check.type: the needle check belongs to the context suite"
    assert not any(refused in p for p in check_problems(meta, by_window=True))
    assert any(refused in p for p in check_problems(meta))
    # through the loader: the same task file under a suite that judges one answer
    monkeypatch.setattr(spec, "find_suite", {
        "context": Suite("context", single_answer)}.get)
    task = tmp_path / "context-needle.md"
    task.write_text((ROOT / "tasks" / "context-needle.md").read_text(encoding="utf-8"),
                    encoding="utf-8")
    with pytest.raises(TaskError) as caught:
        spec.load_task(task)
    assert any(refused in p for p in caught.value.problems)
