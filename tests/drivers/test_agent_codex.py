"""The real Codex CLI under BenchRig's confinement: its own sandbox (bubblewrap) cannot start
inside ours, so every shell command used to fail inside the turn while codex exited 0 — a
silent wrong result. Confined, it now runs without a sandbox of its own (BenchRig's is the
sandbox), and a command its own sandbox failed to run is an error, never a quiet pass."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchrig.drivers import get_driver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS
from tests.helpers.agents import attempt, needs_bwrap, stream
from tests.helpers.responses import MARKER, Responses

# where `make agents` installs the pinned Codex (or BENCHRIG_CODEX_BIN for a trial)
INSTALLED = ROOT / ".agents" / "node_modules" / ".bin" / "codex"
CODEX = INSTALLED if INSTALLED.exists() else Path(os.environ.get("BENCHRIG_CODEX_BIN", INSTALLED))


@pytest.mark.agent
@needs_bwrap
@pytest.mark.skipif(not CODEX.exists(), reason=f"the Codex CLI is not installed at {INSTALLED} "
                    "(make agents installs it)")
def test_real_codex_runs_the_models_shell_command_in_its_confined_workspace(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("BENCHRIG_CODEX_BIN", str(CODEX))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-stand-in")
    with Responses().serving() as model:
        (home / ".codex" / "config.toml").write_text(
            f'[model_providers.standin]\nname = "standin"\nbase_url = "{model.url}"\n'
            'wire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n')
        task = load_task(TASKS / "lru-cache.md")
        done = run_attempt(task, "gpt-5", get_driver("codex"), "standin",
                           settings_for(task, Overrides()), tmp_path / "results", agent="codex")
    r = done.result
    outputs = model.tool_outputs()
    # the one shell call really ran, in the workspace, and wrote the solution it is judged on
    assert len(outputs) == 1 and MARKER in outputs[0] and "benchrig-agent-" in outputs[0], outputs
    assert "bwrap:" not in outputs[0]
    assert (r["result"], r["code_source"]) == ("pass", "file"), r.get("error")
    assert r["settings"]["agent_confinement"]["method"] == "bubblewrap"
    assert "--dangerously-bypass-approvals-and-sandbox" in r["settings"]["agent_flags"]
    assert r["environment"]["runtime"]["version"]


def test_a_command_codex_s_own_sandbox_failed_to_run_is_an_error(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What codex printed when its bubblewrap could not start inside BenchRig's: the command
    failed inside the turn, the turn completed, codex exited 0."""
    failed = {"type": "item.completed", "item": {
        "id": "item_1", "type": "command_execution", "command": "bash -lc 'cat > solution.py'",
        "aggregated_output": "bwrap: setting up uid map: Operation not permitted\n",
        "exit_code": 1, "status": "failed"}}
    lines = [line for line in stream("codex-success").splitlines()
             if '"command_execution"' not in line and "solution.py" not in line]
    at = next(i for i, line in enumerate(lines) if '"turn.completed"' in line)
    text = "\n".join([*lines[:at], json.dumps(failed), *lines[at:]]) + "\n"
    done = attempt(monkeypatch, tmp_path, "codex", "codex-success", "gpt-5", text=text)
    r = done.result
    assert r["result"] == "error" and done.engine["exit_code"] == 0
    assert "its own sandbox could not run the model's command: bwrap: setting up uid map" in (
        r["error"]["message"])
