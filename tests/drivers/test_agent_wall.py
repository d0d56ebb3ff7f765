"""An agent's wall time ends at its exit or at the last line read, whichever is later: lines
still in the pipe (or written by something it left running) are read after the exit is seen,
and no figure may come after the wall (ttft ≤ wall)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from benchrig.core.settings import Settings
from benchrig.drivers import confine
from benchrig.drivers.agent import drive
from benchrig.drivers.agent_env import Needs
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.codex import CodexParser
from benchrig.drivers.confine import Support
from benchrig.prompt import render
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.processes import run, stdout

# The agent exits at once; a child it leaves behind still holds its stdout and writes later.
LATE_WRITER = """
    import subprocess, sys
    print('{"type": "thread.started", "thread_id": "t"}', flush=True)
    late = ('import time; time.sleep(0.3); '
            'print(\\'{"type": "item.completed", "item": {"type": "agent_message", '
            '"text": "done"}}\\', flush=True); '
            'print(\\'{"type": "turn.completed", "usage": {"input_tokens": 5, '
            '"output_tokens": 3}}\\', flush=True)')
    subprocess.Popen([sys.executable, "-c", late])
"""


def agent(tmp_path: Path) -> list[str]:
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(LATE_WRITER))
    # the interpreter itself, not the checkout's .venv link: a confined agent cannot see that
    return [os.path.realpath(sys.executable), str(path)]


def test_lines_read_after_the_exit_end_the_wall(tmp_path: Path) -> None:
    lines, finished = run(agent(tmp_path), tmp_path)
    out = stdout(lines)
    assert len(out) == 3 and finished.exit_code == 0
    assert out[-1].t >= 0.3  # well after the agent's own exit
    assert max(line.t for line in lines) <= finished.wall_s


def test_ttft_is_never_after_the_wall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Unconfined: confined, the late writer dies with the agent's pid namespace at its exit.
    monkeypatch.setattr(confine, "detect", lambda: Support(None, "test: unconfined"))
    task = load_task(TASKS / "lru-cache.md")
    request = DriverRequest(task.view(), render(task, "agent"), "m", None, Settings(timeout_s=30))
    output = drive(request, agent="codex", argv=agent(tmp_path), needs=Needs(),
                   parser=CodexParser(), runtime={}, effective={})
    m = output.metrics
    assert m.ttft_ms is not None and m.wall_s is not None
    assert 300 <= m.ttft_ms <= m.wall_s * 1000
