"""Agent processes: lines timed as they arrive, a pty for block-buffering CLIs, the whole
process group killed on timeout or left-overs, and files read back without following links."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers.agent_process import (
    PIPE_GRACE_S,
    TERM_GRACE_S,
    read_regular_file,
)
from tests.helpers.processes import run, script, stdout, wait_dead


def test_lines_are_stamped_when_they_arrive_and_stderr_is_kept_apart(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import sys, time
        print('{"n": 1}', flush=True)
        time.sleep(0.4)
        print("oops", file=sys.stderr, flush=True)
        print('{"n": 2}', flush=True)
        sys.stdout.write("no newline at the end")
        sys.exit(3)
    """)
    lines, finished = run(argv, tmp_path)
    out = stdout(lines)
    assert [line.text for line in out] == ['{"n": 1}', '{"n": 2}', "no newline at the end"]
    assert out[1].t - out[0].t >= 0.35
    assert [line.text for line in lines if line.stream == "stderr"] == ["oops"]
    assert finished.exit_code == 3 and not finished.timed_out
    assert finished.stderr_tail == "oops"
    assert finished.wall_s >= 0.4


BUFFERED = """
    import time
    print("first")
    time.sleep(0.5)
    print("second")
"""


def test_a_block_buffering_writer_streams_only_through_a_pty(tmp_path: Path) -> None:
    piped, _ = run(script(tmp_path, BUFFERED), tmp_path)
    first, second = stdout(piped)
    assert second.t - first.t < 0.2  # a pipe gets both lines at exit
    with_pty, finished = run(script(tmp_path, BUFFERED), tmp_path, use_pty=True)
    first, second = stdout(with_pty)
    assert (first.text, second.text) == ("first", "second")  # no \r: the pty is raw
    assert second.t - first.t >= 0.4
    assert finished.exit_code == 0


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import subprocess, time
        child = subprocess.Popen(["sleep", "600"])
        print(child.pid, flush=True)
        time.sleep(600)
    """)
    began = time.monotonic()
    lines, finished = run(argv, tmp_path, timeout_s=1.0)
    assert finished.timed_out and finished.exit_code is None
    assert time.monotonic() - began < 1.0 + TERM_GRACE_S + 1.0
    assert wait_dead(int(stdout(lines)[0].text))


@pytest.mark.slow
def test_an_agent_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("stubborn", flush=True)
        time.sleep(600)
    """)
    began = time.monotonic()
    _, finished = run(argv, tmp_path, timeout_s=0.5)
    assert finished.timed_out
    assert TERM_GRACE_S <= time.monotonic() - began < 0.5 + TERM_GRACE_S + 1.5


@pytest.mark.slow
def test_leftovers_holding_the_pipe_after_exit_are_killed(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import subprocess
        child = subprocess.Popen(["sleep", "600"])  # inherits stdout and keeps it open
        print(child.pid, flush=True)
    """)
    began = time.monotonic()
    lines, finished = run(argv, tmp_path)
    took = time.monotonic() - began
    assert finished.exit_code == 0 and not finished.timed_out
    # the agent's own exit, not the grace: the grace comes after wall_s, however slow the
    # machine (a relation, not a figure: issue 23); and the leftover's 600 s are not waited
    assert finished.wall_s + PIPE_GRACE_S <= took < 3 * PIPE_GRACE_S + finished.wall_s
    assert wait_dead(int(stdout(lines)[0].text))


def test_a_crash_by_signal_is_a_negative_exit_code(tmp_path: Path) -> None:
    argv = script(tmp_path, """
        import os, signal
        print("going down", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    """)
    _, finished = run(argv, tmp_path)
    assert finished.exit_code == -11


def test_reads_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "solution.py").write_text("x = 1\n")
    assert read_regular_file(tmp_path, "pkg/solution.py", 100) == ("x = 1\n", "read (6 bytes)")
    assert read_regular_file(tmp_path, "missing.py", 100) == (None, "absent")


@pytest.mark.parametrize("prepare, relative, reason", [
    (lambda root: (root / "solution.py").symlink_to("/etc/passwd"), "solution.py",
     "symbolic link"),
    (lambda root: (root / "d").symlink_to("/etc", target_is_directory=True), "d/passwd",
     "symbolic link"),
    (lambda root: os.mkfifo(root / "solution.py"), "solution.py", "not a regular file"),
    (lambda root: (root / "solution.py").mkdir(), "solution.py", "not a regular file"),
    (lambda root: (root / "solution.py").write_bytes(b"x" * 101), "solution.py",
     "larger than 100 bytes"),
    (lambda root: (root / "solution.py").write_bytes(b"\xff\xfe"), "solution.py", "not UTF-8"),
    (lambda root: None, "../outside.py", "leaves the workspace"),
    (lambda root: None, "/etc/passwd", "leaves the workspace"),
])
def test_refuses_what_is_not_a_regular_file_inside(tmp_path: Path, prepare: Any,
                                                   relative: str, reason: str) -> None:
    prepare(tmp_path)
    text, how = read_regular_file(tmp_path, relative, 100)
    assert text is None
    assert how.startswith("refused") and reason in how
