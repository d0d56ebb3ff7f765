"""One attempt of a fixture agent CLI (tests/fixtures/agents/) through the real runner."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers import confine, get_driver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS
from tests.helpers.staging import stage_files

FIXTURES = ROOT / "tests" / "fixtures" / "agents"
LOG_PREFIX = "fake-agent-log: "  # fake_cli.py's stderr lines that carry its log
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


def stream(scenario: str) -> str:
    """A scenario's text (tests/fixtures/agents/streams/<scenario>.jsonl)."""
    return (FIXTURES / "streams" / f"{scenario}.jsonl").read_text()


def use_scenario(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """The fixture replays `text`: handed over in its environment, since a confined fixture
    sees neither the host's /tmp (where tmp_path is) nor the checkout."""
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", text if text.endswith("\n") else text + "\n")


def use_fixture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, agent: str,
                scenario: str) -> Path:
    monkeypatch.setenv(f"BENCHRIG_{agent.upper()}_BIN", str(FIXTURES / agent))
    use_scenario(monkeypatch, stream(scenario))
    log = tmp_path / "agent-log.jsonl"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    monkeypatch.setenv("FAKE_AGENT_FILES", stage_files())
    return log


def fixture_log(log: Path, *sidecars: Path) -> list[dict[str, Any]]:
    """What the fixture logged: the file `log` where it could write it (unconfined), else the
    copies it printed on stderr (confined: its /tmp is its own), kept in the `sidecars`."""
    if log.exists():
        return [json.loads(line) for line in log.read_text().splitlines()]
    entries = []
    for sidecar in sidecars:
        for line in sidecar.read_text().splitlines():
            record = json.loads(line)
            text = record.get("text") or ""
            if record.get("kind") == "stderr" and text.startswith(LOG_PREFIX):
                entries.append(json.loads(text[len(LOG_PREFIX):]))
    return entries


def sidecar_of(result: Path) -> Path:
    return result.with_suffix(".transcript.jsonl")


def use_probing_claude(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                       probe: Any) -> Path:
    """The claude fixture, made to run `probe` (fake_cli.py's probe plan) before it solves
    lru-cache as claude-success does; its log."""
    log = use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    use_scenario(monkeypatch, '{"_fixture": "probe"}\n' + stream("claude-success"))
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
            model: str, provider: str | None = None, task_file: Path | None = None,
            text: str | None = None) -> Done:
    """One attempt of the fixture `agent` replaying `scenario` (or the scenario `text`)."""
    log = use_fixture(monkeypatch, tmp_path, agent, scenario)
    if text is not None:
        use_scenario(monkeypatch, text)
    task = load_task(task_file or TASKS / "lru-cache.md")
    done = run_attempt(task, model, get_driver(agent), provider,
                       settings_for(task, Overrides()), tmp_path / "results", agent=agent)
    validate(done.result)
    sidecar = sidecar_of(done.path)
    return Done(done.result, [json.loads(line) for line in sidecar.read_text().splitlines()],
                fixture_log(log, sidecar))


def replayed(scenario: str) -> list[dict[str, Any]]:
    """The protocol lines of a scenario (its fixture directives left out)."""
    lines = (FIXTURES / "streams" / f"{scenario}.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if "_fixture" not in event]

