"""Host processes as the agent tests see them: alive or dead, found by command line, run."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

from benchrig.drivers.agent_process import Finished, Line, stream_process


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie awaiting its reaper counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def host_processes(fragment: str) -> set[int]:
    """Live processes whose command line contains `fragment`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if fragment.encode() in command and alive(int(entry.name)):
                found.add(int(entry.name))
    return found


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _descends(pid: int, ancestor: int) -> bool:
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        if pid == ancestor:
            return True
        seen.add(pid)
        pid = _parent(pid) or 0
    return False


def mine(pids: set[int]) -> set[int]:
    """The processes among `pids` this test process started: its descendants, and whatever
    works in (or names) its own folder of agent attempts, an orphan of an agent included.
    Other engineers' agents on the same machine run the same shared .agents/ install."""
    from benchrig.drivers.confine import attempts_folder

    folder = str(attempts_folder())
    kept = set()
    for pid in pids:
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            cwd = command = ""
        if _descends(pid, os.getpid()) or cwd.startswith(folder) or folder in command:
            kept.add(pid)
    return kept


def wait_dead(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def script(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(source))
    return [sys.executable, str(path)]


def run(argv: list[str], cwd: Path, timeout_s: float = 30.0, use_pty: bool = False,
        ) -> tuple[list[Line], Finished]:
    lines: list[Line] = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    finished = stream_process(argv, cwd=cwd, env=env, timeout_s=timeout_s,
                              on_line=lines.append, use_pty=use_pty)
    return lines, finished


def stdout(lines: list[Line]) -> list[Line]:
    return [line for line in lines if line.stream == "stdout"]



# A setsid'd, signal-ignoring, non-dumpable process, orphaned at once: what a sweep must find.
HIDING = ("import ctypes, os, signal, time\n"
          "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
          "[signal.signal(s, signal.SIG_IGN) for s in (1, 2, 15)]\n"
          "os.setsid()\nos.fork() and os._exit(0)\ntime.sleep(600)\n")


def start_hidden(uid: int) -> None:
    """Leave a HIDING process running as `uid` (root with setpriv only)."""
    import subprocess

    subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                    "/usr/bin/python3", "-I", "-c", HIDING], check=True, timeout=30)
