"""The real Gemini CLI through the gateway's Gemini front on a scripted stand-in model: a
real write_file call that writes the workspace, every call metered. The CLI comes from
.agents/ (or BENCHRIG_GEMINI_BIN); without it this test skips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchrig.drivers.gemini import SETTINGS
from tests.gateway.test_real_clis import cli, run, scripted

pytestmark = pytest.mark.agent

SCRIPT = [{"tool_calls": [{"name": "write_file", "arguments": {
    "file_path": "solution.py", "content": "print(1)\n"}}]}, {"content": "Wrote solution.py."}]


def test_gemini_cli_writes_through_the_gemini_front(tmp_path: Path) -> None:
    gemini = cli("gemini", "BENCHRIG_GEMINI_BIN")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
    with scripted(SCRIPT) as session:
        done = run([str(gemini), "-o", "stream-json", "--yolo", "--skip-trust", "-m",
                    "scripted", "-p", "Write solution.py"], workspace,
                   {"HOME": str(home), "GEMINI_API_KEY": "none",
                    "GOOGLE_GEMINI_BASE_URL": session.root})
        calls = session.calls()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (workspace / "solution.py").read_text() == "print(1)\n"
    assert [c.front for c in calls] == ["gemini"] * len(calls) and len(calls) >= 2
    assert calls[0].tool_calls == ("write_file",) and all(c.status == "ok" for c in calls)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["type"] == "result" and result["status"] == "success"
    # what it counted is what the gateway told it: the gateway's own counts
    assert result["stats"]["output_tokens"] == sum(c.output_tokens or 0 for c in calls)
