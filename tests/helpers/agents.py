"""One attempt of a fixture agent CLI (tests/fixtures/agents/) through the real runner."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers import confine, get_driver
from benchrig.result import validate
from benchrig.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS
from tests.helpers.staging import stage_files

FIXTURES = ROOT / "tests" / "fixtures" / "agents"
CONFINED = confine.detect().available
needs_bwrap = pytest.mark.skipif(not CONFINED, reason=f"agents cannot be confined here: "
                                 f"{confine.detect().reason}")


@dataclass(frozen=True)
class Done:
    result: dict[str, Any]
    sidecar: list[dict[str, Any]]
    log: list[dict[str, Any]]

    @property
    def metrics(self) -> dict[str, Any]:
        return self.result["metrics"]

    @property
    def engine(self) -> dict[str, Any]:
        engine: dict[str, Any] = self.result["metrics"]["engine"]
        return engine

    @property
    def argv(self) -> list[str]:
        return next(entry["argv"] for entry in self.log if "argv" in entry)


def use_fixture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, agent: str,
                scenario: str) -> Path:
    monkeypatch.setenv(f"BENCHRIG_{agent.upper()}_BIN", str(FIXTURES / agent))
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", str(FIXTURES / "streams" / f"{scenario}.jsonl"))
    log = tmp_path / "agent-log.jsonl"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    monkeypatch.setenv("FAKE_AGENT_FILES", str(stage_files(tmp_path)))
    return log


def use_probing_claude(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                       probe: Any) -> Path:
    """The claude fixture, made to run `probe` (fake_cli.py's probe plan) before it solves
    lru-cache as claude-success does; its log."""
    log = use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    scenario = tmp_path / "probe.jsonl"
    scenario.write_text('{"_fixture": "probe"}\n'
                        + (FIXTURES / "streams" / "claude-success.jsonl").read_text())
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", str(scenario))
    monkeypatch.setenv("FAKE_AGENT_PROBE", json.dumps(probe))
    return log


def task_with_timeout(tmp_path: Path, timeout_s: int) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    text = (TASKS / "lru-cache.md").read_text().replace("timeout_s: 120", f"timeout_s: {timeout_s}")
    (folder / "lru-cache.md").write_text(text)
    shutil.copy(TASKS / "lru-cache.test.py", folder)
    return folder / "lru-cache.md"


def attempt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, agent: str, scenario: str,
            model: str, provider: str | None = None, task_file: Path | None = None) -> Done:
    log = use_fixture(monkeypatch, tmp_path, agent, scenario)
    task = load_task(task_file or TASKS / "lru-cache.md")
    done = run_attempt(task, model, get_driver(agent), provider,
                       settings_for(task, Overrides()), tmp_path / "results", agent=agent)
    validate(done.result)
    sidecar = done.path.with_suffix(".transcript.jsonl").read_text().splitlines()
    entries = log.read_text().splitlines() if log.exists() else []
    return Done(done.result, [json.loads(line) for line in sidecar],
                [json.loads(line) for line in entries])


def replayed(scenario: str) -> list[dict[str, Any]]:
    """The protocol lines of a scenario (its fixture directives left out)."""
    lines = (FIXTURES / "streams" / f"{scenario}.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if "_fixture" not in event]

