"""The real Claude Code and Codex CLIs through the gateway's Messages and Responses fronts,
on a scripted stand-in model: each makes a real tool call that writes the workspace, and
every call is metered. The CLIs come from .agents/ (or BENCHRIG_CLAUDE_BIN /
BENCHRIG_CODEX_BIN); without them these tests skip."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from benchrig.gateway import Gateway, Session
from benchrig.gateway.scripted import ScriptedBackend
from tests.conftest import ROOT

pytestmark = pytest.mark.agent


def cli(name: str, variable: str) -> Path:
    found = os.environ.get(variable) or str(ROOT / ".agents" / "node_modules" / ".bin" / name)
    if not Path(found).exists():
        pytest.skip(f"{name} is not installed here (.agents/ or ${variable})")
    return Path(found)


@contextmanager
def scripted(replies: list[dict[str, Any]]) -> Iterator[Session]:
    with Gateway(ScriptedBackend(replies)) as gateway:
        yield gateway.open_session("cli")


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    return subprocess.run(argv, cwd=cwd, env={**base, **env}, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def test_claude_code_writes_through_the_messages_front(tmp_path: Path) -> None:
    claude = cli("claude", "BENCHRIG_CLAUDE_BIN")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    script = [{"tool_calls": [{"name": "Write", "arguments": {  # its Write takes a full path
        "file_path": str(workspace / "solution.py"), "content": "print('hi')\n"}}]},
        {"content": "Wrote solution.py."}]
    with scripted(script) as session:
        done = run([str(claude), "-p", "Write solution.py", "--output-format", "stream-json",
                    "--verbose", "--model", "scripted", "--dangerously-skip-permissions"],
                   workspace, {"HOME": str(home), "IS_SANDBOX": "1",
                               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                               "ANTHROPIC_BASE_URL": session.root,
                               "ANTHROPIC_AUTH_TOKEN": "none", "ANTHROPIC_API_KEY": ""})
        calls = session.calls()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (workspace / "solution.py").read_text() == "print('hi')\n"
    assert [c.front for c in calls] == ["anthropic-messages"] * len(calls)
    assert calls[0].tool_calls == ("Write",) and all(c.status == "ok" for c in calls)


CODEX_SCRIPT = [{"tool_calls": [{"name": "exec_command", "arguments": {
    "cmd": "printf 'print(1)\\n' > solution.py"}}]}, {"content": "Wrote solution.py."}]


def test_codex_writes_through_the_responses_front(tmp_path: Path) -> None:
    codex = cli("codex", "BENCHRIG_CODEX_BIN")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    workspace.mkdir()
    with scripted(CODEX_SCRIPT) as session:
        (home / ".codex" / "config.toml").write_text(
            'model = "scripted"\nmodel_provider = "benchrig"\n[model_providers.benchrig]\n'
            f'name = "benchrig"\nbase_url = "{session.base_url}"\nwire_api = "responses"\n')
        done = run([str(codex), "exec", "--json", "--skip-git-repo-check", "--ephemeral",
                    "--dangerously-bypass-approvals-and-sandbox", "Write solution.py"],
                   workspace, {"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
        calls = session.calls()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (workspace / "solution.py").read_text() == "print(1)\n"
    assert [c.front for c in calls] == ["openai-responses"] * len(calls)
    assert calls[0].tool_calls == ("exec_command",) and all(c.status == "ok" for c in calls)
