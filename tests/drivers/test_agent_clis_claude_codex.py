"""The real Claude Code and Codex CLIs (pinned in .agents/ by `make agents-all`) through their
drivers, against the scripted stand-in model in their own APIs (Anthropic Messages; OpenAI
Responses): each starts offline, makes a real tool call that writes solution.py, and leaves
a schema-valid result and nothing running. Their drivers are left as they are: this only
proves the real CLIs run here, confined, on a local endpoint."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers import confine, get_driver
from benchrig.drivers.agent_clis import AGENTS_DIR
from benchrig.result import validate
from benchrig.runner import Overrides, run_attempt, settings_for
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


# As root, Codex's own bubblewrap cannot start inside BenchRig's (docs/security.md: creating
# a user namespace that maps root needs CAP_SETFCAP): its shell tool answers "bwrap: setting
# up uid map: Operation not permitted" and codex exec --json reports no item for it, so the
# file is never written. The codex driver is to handle it; until then this is expected.
NESTED_BWRAP = os.geteuid() == 0 and confine.detect().available


@pytest.mark.agent
@pytest.mark.xfail(NESTED_BWRAP, strict=True, reason="as root, codex's own bubblewrap cannot "
                   "nest in BenchRig's and its command fails without an event")
def test_codex_against_a_local_responses_endpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = real("codex")
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    with StandIn() as model:
        (codex_home / "config.toml").write_text(
            'check_for_update_on_startup = false\n'
            '[analytics]\nenabled = false\n'
            '[model_providers.standin]\nname = "standin"\n'
            f'base_url = "{model.url}/v1"\nwire_api = "responses"\n')
        monkeypatch.setenv("CODEX_HOME", str(codex_home))
        monkeypatch.setenv("BENCHRIG_CODEX_BIN", str(binary))
        result = attempt("codex", "standin", model, tmp_path)
    check(result, model)
    assert all(s.path == "/v1/responses" for s in model.model_requests())
