"""Files: fsynced off the writer's path, by exit at the latest; kill -9 leaves them whole."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchrig import durable
from benchrig.drivers.replay import ReplayDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import read_valid, write_atomic
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS, answer_file


def _synced(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every fsync from now on: (the calling thread's name, "dir" or "file")."""
    seen: list[tuple[str, str]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        seen.append((threading.current_thread().name, kind))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def test_an_attempt_waits_for_no_fsync_and_its_files_and_folder_reach_the_disk_by_flush(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_task(TASKS / "bat-and-ball.md")
    answer = answer_file(tmp_path, "The ball costs 5 cents.\nFinal answer: 5")
    durable.flush()
    seen = _synced(monkeypatch)
    attempt = run_attempt(task, "m", ReplayDriver(), str(answer),
                          settings_for(task, Overrides()), tmp_path / "results")
    on_path = [s for s in seen if s[0] == threading.current_thread().name]
    durable.flush()
    assert on_path == []  # the attempt's own thread never waited on the disk
    assert [kind for _, kind in seen].count("file") == 2  # the result and its transcript
    assert ("benchrig-durable", "dir") in seen  # the renames themselves, by their folder
    assert read_valid(attempt.path)["result"] == "pass"


def test_a_file_handed_over_is_fsynced_at_exit_even_when_nothing_flushed(
        tmp_path: Path) -> None:
    # the checker's atexit hook is registered before benchrig's, so it runs after it
    program = (
        "import atexit, os, sys\n"
        "seen = []\n"
        "atexit.register(lambda: print(len(seen)))\n"
        "real = os.fsync\n"
        "os.fsync = lambda fd: (seen.append(fd), real(fd))[1]\n"
        "from pathlib import Path\n"
        "from benchrig.resultio.files import write_atomic\n"
        "for i in range(20):\n"
        f"    write_atomic(Path({str(tmp_path)!r}) / f'{{i}}.json', '{{}}')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=True)
    assert int(done.stdout.split()[-1]) >= 21  # 20 files and their folder, at least once


def test_an_fsync_that_fails_is_said_at_flush(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    durable.flush()

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    write_atomic(tmp_path / "r.json", "{}")
    with pytest.raises(OSError, match=r"could not be made durable.*Input/output error"):
        durable.flush()
    assert json.loads((tmp_path / "r.json").read_text()) == {}  # written and whole regardless


def test_a_run_killed_by_sigkill_leaves_only_whole_valid_result_files(tmp_path: Path) -> None:
    answer = answer_file(tmp_path, "The ball costs 5 cents.\nFinal answer: 5")
    results = tmp_path / "results"
    run = subprocess.Popen(
        [sys.executable, "-m", "benchrig.cli", "run", "bat-and-ball", "-m", "m", "-d",
         "replay", "-p", str(answer), "--runs", "2000"], cwd=ROOT,
        env={**os.environ, "BENCHRIG_RESULTS_DIR": str(results)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        waited = time.monotonic()
        while len(list(results.glob("*.json"))) < 30:  # killed in the middle of writing
            assert run.poll() is None and time.monotonic() - waited < 120
            time.sleep(0.01)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    files = sorted(results.glob("*.json"))
    assert len(files) >= 30
    for file in files:
        result = read_valid(file)  # whole and schema-valid, or this raises
        sidecar = file.with_name(result["transcript_file"])
        for line in sidecar.read_text(encoding="utf-8").splitlines():
            json.loads(line)
    # what the kill cut short is a hidden temporary, never a result file
    assert all(p.name.startswith(".") for p in results.iterdir()
               if p.suffix not in (".json", ".jsonl") and p.is_file())


def test_a_second_ctrl_c_while_waiting_at_exit_is_one_line_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C again while the exit waits for the fsyncs: atexit would print "Exception
    ignored in atexit callback" and a traceback; it is one line saying what is at stake."""
    from benchrig import durable

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(durable, "flush", interrupted)
    durable._at_exit()
    err = capsys.readouterr().err
    assert err.startswith("benchrig: interrupted before the last results were fsynced")
    assert err.count("\n") == 1
