"""Ctrl-C of a real `benchrig run` while its attempts are blocked where they can block (a
driver waiting on a slow server, a sandbox check running, the embedded model generating):
the attempts stop cooperatively (their deadline is stopped, what they hold is closed), what
finished is recorded, and stderr says only that the run was interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchrig import sandbox
from benchrig.core.settings import Settings
from benchrig.drivers import get_driver
from benchrig.execute import AttemptSpec, LocalExecutor, Slot
from benchrig.execute.plan import attempt_specs
from benchrig.orchestrate.runner import perform
from benchrig.spec import load_tasks, task_paths
from tests.conftest import ROOT
from tests.helpers.paced import paced

pytestmark = pytest.mark.slow

SLEEPER = '''
import time


class LRUCache:
    def __init__(self, capacity):
        time.sleep(600)  # blocks the check: the sandbox call waits on it
'''


def interrupted(argv: list[str], folder: Path, *phases: str) -> tuple[int, str]:
    """Start `benchrig run argv`, SIGINT it once its progress on stderr has shown each of
    `phases` (an attempt is blocked in that phase by then): (exit code, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "run", *argv,
                             "--results-dir", str(folder)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stderr is not None
    seen: list[str] = []
    waiting = list(phases)
    while waiting:
        line = proc.stderr.readline()
        assert line, "".join(seen)  # it ended before reaching the phase
        seen.append(line)
        while waiting and waiting[0] in line:
            waiting.pop(0)
    time.sleep(0.5)  # well inside the blocked call
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, "".join(seen) + err


def clean(err: str) -> None:
    assert "interrupted after" in err, err
    for raw in ("Exception ignored", "Traceback", "KeyboardInterrupt", "Timer"):
        assert raw not in err, err


def test_ctrl_c_while_the_driver_waits_on_a_slow_server(tmp_path: Path) -> None:
    with paced(delay_s=120) as url:
        code, err = interrupted(["bat-and-ball", "two-trains", "--model", "a", "--driver",
                                 "openai", "--provider", url, "--jobs", "2"], tmp_path,
                                ": generating")
    assert code == 130, err
    clean(err)
    assert not list(tmp_path.glob("*.json*"))  # nothing in flight is recorded


def test_ctrl_c_while_a_sandbox_check_runs(tmp_path: Path) -> None:
    answer = tmp_path / "sleeper.py"
    answer.write_text(SLEEPER, encoding="utf-8")
    folder = tmp_path / "results"
    code, err = interrupted(["lru-cache", "--model", "oracle", "--driver", "replay",
                             "--provider", str(answer)], folder, ": checking")
    assert code == 130, err
    clean(err)
    assert not list(folder.glob("*.json*"))


@pytest.mark.model
def test_ctrl_c_while_the_model_generates_after_a_recorded_attempt(tmp_path: Path) -> None:
    code, err = interrupted(["bat-and-ball", "two-trains", "--model", "smollm2",
                             "--max-tokens", "4000", "--seed", "1"], tmp_path,
                            "[2/2]", ": generating")
    assert code == 130, err
    clean(err)



def stopped_in_process(tasks: list[str], driver: str, provider: str, settle_s: float) -> None:
    """Run the attempts on the executor in this process, Ctrl-C once they are blocked: every
    attempt thread has ended by the time `run` raises (stopped, not abandoned blocked)."""
    plan = attempt_specs(((task, "m", 0) for task in load_tasks(task_paths(tasks))), driver,
                         driver, provider, lambda t, m, r: Settings(timeout_s=300),
                         Path("unused"), jobs=len(tasks))
    threading.Thread(target=lambda: (time.sleep(settle_s),
                                     os.kill(os.getpid(), signal.SIGINT)), daemon=True).start()
    with sandbox.SandboxPool(sandbox.detect()) as pool:

        def work(spec: AttemptSpec, slot: Slot) -> object:
            return perform(spec, slot, get_driver(spec.driver), pool)

        with pytest.raises(KeyboardInterrupt):
            LocalExecutor(len(tasks)).run(plan, work, lambda s, out: None)
    left = [t.name for t in threading.enumerate() if t.name.startswith("attempt-")]
    assert left == []  # each ended itself within the grace: none left blocked


def test_a_request_waiting_on_a_slow_server_is_stopped_not_abandoned() -> None:
    with paced(delay_s=120) as url:
        stopped_in_process(["bat-and-ball", "two-trains"], "openai", url, 2.0)


def test_a_sandbox_check_waiting_on_the_candidate_is_stopped_not_abandoned(
        tmp_path: Path) -> None:
    answer = tmp_path / "sleeper.py"
    answer.write_text(SLEEPER, encoding="utf-8")
    stopped_in_process(["lru-cache"], "replay", str(answer), 3.0)
