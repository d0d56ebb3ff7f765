"""The real Claude Code CLI (pinned in .agents/ by `make agents-all`) through its driver,
against the scripted stand-in model in its own API (Anthropic Messages): it starts offline,
makes a real tool call that writes solution.py, and leaves a schema-valid result and nothing
running. The real Codex CLI is proven once, in tests/drivers/test_agent_codex.py (its shell
command really ran in the confined workspace, without a sandbox of its own): the strict xfail
that stood here for it passes since the codex driver gives way to BenchRig's sandbox."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers import confine, get_driver
from benchrig.drivers.agent_clis import AGENTS_DIR
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS
from tests.drivers.test_agent_clis import ours
from tests.helpers.standin import StandIn

BIN = AGENTS_DIR / "node_modules" / ".bin"


def real(name: str) -> Path:
    if shutil.which("npm") is None:
        pytest.skip(f"npm not found: {name} cannot be installed here")
    binary = BIN / name
    if not binary.exists():
        pytest.fail(f"{binary} is missing: `make agents-all` installs it (make test does)")
    return binary


def attempt(agent: str, provider: str | None, model: StandIn, tmp_path: Path
            ) -> dict[str, Any]:
    task = load_task(TASKS / "lru-cache.md")
    before = ours()
    done = run_attempt(task, "smollm2", get_driver(agent), provider,
                       settings_for(task, Overrides()), tmp_path / "results", agent=agent)
    validate(done.result)
    assert ours() <= before
    return done.result


def check(result: dict[str, Any], model: StandIn) -> None:
    assert result["result"] == "pass", (result.get("error"), result["metrics"]["engine"])
    assert result["code_source"] == "file"
    assert result["metrics"]["engine"]["tool_calls"] >= 1
    assert len(model.model_requests()) >= 2, [s.path for s in model.seen]
    if confine.detect().available:
        confined = result["settings"]["agent_confinement"]
        assert confined["method"] == "bubblewrap" and str(ROOT) in confined["hidden"]


@pytest.mark.agent
def test_claude_code_against_a_local_messages_endpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = real("claude")
    home = tmp_path / "home"  # none of the host's ~/.claude is copied
    home.mkdir()
    with StandIn() as model:
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("BENCHRIG_CLAUDE_BIN", str(binary))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", model.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "standin")
        monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "smollm2")
        result = attempt("claude", None, model, tmp_path)
    check(result, model)
    assert all(s.path.startswith("/v1/messages") for s in model.model_requests())
