"""Every file a driver names to its agent (a settings file, a system prompt, a trajectory or a
chat history to write) is where the confined agent finds it: the agent's /tmp is its own, so a
driver's scratch folder in the host's /tmp is not there for it (mini-swe-agent then exited
without its trajectory, aider without its chat history)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.settings import Settings
from benchrig.drivers import agent, agent_clis, confine, get_driver
from benchrig.drivers.base import DriverRequest
from benchrig.prompt import render
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.agents import needs_bwrap

BINARY_VARS = {"aider": "BENCHRIG_AIDER_BIN", "gemini": "BENCHRIG_GEMINI_BIN",
               "miniswe": "BENCHRIG_MINISWE_BIN", "opencode": "BENCHRIG_OPENCODE_BIN",
               "qwen": "BENCHRIG_QWEN_BIN"}
# Run in the agent's place, inside its confinement: each named path (or, for a file still to
# be written, its folder) that is not there is printed.
LOOK = 'for p; do [ -e "$p" ] || [ -d "$(dirname "$p")" ] || echo "$p"; done'


class Looked(Exception):
    """What the confined look found missing (ends the attempt before any agent runs)."""

    def __init__(self, missing: list[str], named: list[str]) -> None:
        super().__init__(missing)
        self.missing, self.named = missing, named


def look_inside(argv: list[str], *, cwd: Path, env: Mapping[str, str], **_: Any) -> None:
    """stream_process's stand-in: the agent's command replaced by LOOK, in the same bwrap."""
    split = argv.index("--")
    inner = argv[split + 1:]
    # the paths that are there on the host (or, for a file to be written, whose folder is)
    named = [v for v in [*inner[1:], *env.values()]
             if v.startswith("/") and not any(c.isspace() or c == ":" for c in v)
             and (os.path.exists(v) or os.path.isdir(os.path.dirname(v)))]
    done = subprocess.run([*argv[:split + 1], "/bin/sh", "-c", LOOK, "sh", *named], cwd=cwd,
                          env=dict(env), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    raise Looked(done.stdout.split(), named)


@needs_bwrap
@pytest.mark.parametrize("name", sorted(BINARY_VARS))
def test_the_confined_agent_finds_every_file_its_driver_names(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BINARY_VARS[name], "/bin/true")
    monkeypatch.setattr(agent_clis, "gateway", lambda: None)  # the base URL as given
    monkeypatch.setattr(agent, "cli_version", lambda *_, **__: None)
    monkeypatch.setattr(agent, "stream_process", look_inside)
    task = load_task(TASKS / "lru-cache.md")
    request = DriverRequest(task.view(), render(task, "agent"), "m", "http://127.0.0.1:9",
                            Settings(timeout_s=30))
    with pytest.raises(Looked) as looked:
        get_driver(name).run(request)
    assert looked.value.missing == []
    assert any(p.startswith(str(confine.attempts_folder())) for p in looked.value.named)


@needs_bwrap
def test_a_driver_that_names_a_host_tmp_file_is_refused_before_the_agent_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The structural guard: a path in the host's /tmp (hidden by the agent's own) named on the
    command line is BenchRig's error, never an agent that quietly does without it."""
    from benchrig.core.errors import DriverError
    from benchrig.drivers.agent_env import Needs
    from benchrig.drivers.codex import CodexParser

    monkeypatch.setattr(agent, "cli_version", lambda *_, **__: None)
    monkeypatch.setattr(agent, "stream_process", look_inside)
    scratch = tmp_path  # in the host's /tmp
    task = load_task(TASKS / "lru-cache.md")
    request = DriverRequest(task.view(), render(task, "agent"), "m", None,
                            Settings(timeout_s=30))
    with pytest.raises(DriverError) as refused:
        agent.drive(request, agent="x", argv=["/bin/true", "-o", str(scratch / "out.json")],
                    needs=Needs(), parser=CodexParser(), runtime={}, effective={})
    assert refused.value.kind == "harness"
    assert str(scratch / "out.json") in str(refused.value)
