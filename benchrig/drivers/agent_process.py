"""Agent CLIs as processes: find one, spawn it in a scratch workspace, time its output line by
line, kill its whole process group on timeout, and read back the file it wrote."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import tty
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchrig.core.deadline import current_stop
from benchrig.core.errors import DriverError
from benchrig.drivers.confine import attempts_folder
from benchrig.paths import ROOT

# Agents installed for this checkout by `make agents` (npm --prefix .agents).
AGENTS_BIN = ROOT / ".agents" / "node_modules" / ".bin"
TERM_GRACE_S = 2.0  # SIGTERM → SIGKILL for the agent's process group
PIPE_GRACE_S = 2.0  # after the agent exits, how long leftover children may hold its stdout
STDERR_TAIL_CHARS = 4000
SOLUTION_CAP_BYTES = 1 << 20
VERSION_PATTERN = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")

_versions: dict[tuple[str, int], str | None] = {}


def locate(name: str, env_var: str, install_hint: str) -> str:
    """The agent's executable: $env_var, else `name` on PATH, else .agents/; DriverError(infra)
    with the install hint when there is none."""
    explicit = os.environ.get(env_var)
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return os.path.abspath(explicit)  # the agent runs in its workspace
        raise DriverError("infra", f"{env_var}={explicit} is not an executable file")
    found = shutil.which(name) or shutil.which(name, path=str(AGENTS_BIN))
    if found is None:
        raise DriverError("infra", f"{name} is not installed (not on PATH, {env_var} unset); "
                          f"install it: {install_hint}")
    return found


def cli_version(binary: str, argv: list[str], *, cwd: Path, env: Mapping[str, str]
                ) -> str | None:
    """`binary --version` reduced to its version number; asked once per executable file.
    `argv` is the command that asks it, confined as the agent's run is (drivers.agent)."""
    try:
        key = (os.path.realpath(binary), os.stat(binary).st_mtime_ns)
    except OSError:
        return None
    if key not in _versions:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                                  env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,
                                  check=False, start_new_session=True)
            match = VERSION_PATTERN.search(done.stdout + "\n" + done.stderr)
            _versions[key] = match.group(0) if match else None
        except (OSError, subprocess.SubprocessError):
            _versions[key] = None
    return _versions[key]


@dataclass(frozen=True)
class Line:
    """One line of the agent's output, stamped when it was read."""

    t: float  # seconds since the agent was spawned
    stream: str  # stdout | stderr
    text: str


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None when BenchRig killed it
    timed_out: bool
    wall_s: float  # spawn → exit or the last line read, whichever is later (or kill)
    stderr_tail: str


class _Splitter:
    """Bytes → complete lines, split on \\n only (JSONL); a partial line waits for the rest.
    Pieces of a long line are joined once, when its end arrives."""

    def __init__(self) -> None:
        self.pending: list[bytes] = []

    def feed(self, data: bytes) -> list[str]:
        if b"\n" not in data:
            self.pending.append(data)
            return []
        head, *middle, tail = data.split(b"\n")
        lines = [b"".join([*self.pending, head]), *middle]
        self.pending = [tail] if tail else []
        return [line.decode("utf-8", "replace").rstrip("\r") for line in lines]

    def rest(self) -> list[str]:
        rest, self.pending = b"".join(self.pending), []
        return [rest.decode("utf-8", "replace").rstrip("\r")] if rest.strip() else []


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it: its pid, and so its process group id,
    stay reserved until BenchRig has killed what is left of the group."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the whole group, SIGKILL it if the agent is still there after the grace."""
    _kill_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE_S
    while time.monotonic() < deadline and not _exited(proc.pid):
        time.sleep(0.02)
    _kill_group(proc.pid, signal.SIGKILL)


def _spawn(argv: list[str], *, cwd: Path, env: Mapping[str, str], use_pty: bool
           ) -> tuple[subprocess.Popen[bytes], float, int, int]:
    """The agent started in its own session: (process, when, its stdout's fd, the pty master
    or -1)."""
    master = slave = -1
    if use_pty:
        master, slave = os.openpty()
        tty.setraw(slave)  # no \r\n translation, no echo
    began = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                            stdout=slave if use_pty else subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    if use_pty:
        os.close(slave)
        return proc, began, master, master
    assert proc.stdout is not None
    return proc, began, proc.stdout.fileno(), master


class _Streams:
    """One running agent's stdout and stderr, read without blocking until it has exited (or
    the deadline): lines split, stamped and handed on as they arrive; when it exited, when its
    last line came, and the tail of its stderr kept."""

    def __init__(self, proc: subprocess.Popen[bytes], out_fd: int, began: float,
                 timeout_s: float, on_line: Callable[[Line], None]) -> None:
        assert proc.stderr is not None
        self.proc, self.began, self.on_line = proc, began, on_line
        self.deadline = began + timeout_s
        self.stop = current_stop()  # the attempt's: once set, it ends here as at the deadline
        self.sources = {out_fd: "stdout", proc.stderr.fileno(): "stderr"}
        self.splitters = {fd: _Splitter() for fd in self.sources}
        self.selector = selectors.DefaultSelector()
        for fd in self.sources:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)
        self.stderr_tail = ""
        self.exited_at: float | None = None
        self.last_line_at: float | None = None
        self.timed_out = False

    def follow(self) -> None:
        """Read until the agent has exited and both streams closed, PIPE_GRACE_S after its
        exit, or the deadline (then `timed_out`)."""
        while True:
            now = time.perf_counter()
            if self.exited_at is None and _exited(self.proc.pid):
                self.exited_at = now
            if self.exited_at is None and (now >= self.deadline or (
                    self.stop is not None and self.stop.is_set())):
                self.timed_out = True
                return
            if not self.selector.get_map():  # both streams closed: wait for the exit itself
                if self.exited_at is not None:
                    return
                time.sleep(0.005)
                continue
            if self.exited_at is not None and now - self.exited_at > PIPE_GRACE_S:
                return  # the agent is gone; something it left behind still holds the pipe
            wait = min(0.25, self.deadline - now) if self.exited_at is None else 0.05
            self._read(max(wait, 0.0))

    def _read(self, wait: float) -> None:
        for key, _ in self.selector.select(wait):
            fd = int(key.fd)
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError as exc:  # a pty master reads EIO once the slave side is closed
                if exc.errno != errno.EIO:
                    raise
                data = b""
            if not data:
                self.selector.unregister(fd)
                self._emit(fd, self.splitters[fd].rest())
            else:
                self._emit(fd, self.splitters[fd].feed(data))

    def _emit(self, fd: int, texts: list[str]) -> None:
        read_at = time.perf_counter()
        now = read_at - self.began
        if texts:
            self.last_line_at = read_at
        for text in texts:
            if self.sources[fd] == "stderr":
                self.stderr_tail = (self.stderr_tail + text + "\n")[-STDERR_TAIL_CHARS:]
            self.on_line(Line(now, self.sources[fd], text))

    def finished(self, ended: float) -> Finished:
        # Lines still in the pipe when the exit was seen are read (and stamped) after it: the
        # wall ends at whichever came last, so no line is ever later than the wall.
        exited_at = self.exited_at
        end = ended if exited_at is None else max(exited_at, self.last_line_at or exited_at)
        return Finished(None if self.timed_out else self.proc.returncode, self.timed_out,
                        end - self.began, self.stderr_tail.strip())


def stream_process(argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float,
                   on_line: Callable[[Line], None], use_pty: bool = False) -> Finished:
    """Run `argv` in its own session and hand each output line to `on_line` as it arrives.

    `use_pty` gives the agent a pseudo-terminal for stdout, for CLIs that block-buffer a pipe.
    Past `timeout_s` the whole process group is killed. Whatever the agent leaves running in
    its group is killed when it exits.
    """
    proc, began, out_fd, master = _spawn(argv, cwd=cwd, env=env, use_pty=use_pty)
    streams = _Streams(proc, out_fd, began, timeout_s, on_line)
    try:
        streams.follow()
    finally:
        if streams.exited_at is None:
            _terminate(proc)
        ended = time.perf_counter()
        _kill_group(proc.pid, signal.SIGKILL)  # leftovers in the agent's group
        proc.wait()
        streams.selector.close()
        assert proc.stderr is not None
        proc.stderr.close()
        if proc.stdout is not None:
            proc.stdout.close()
        if use_pty:
            os.close(master)
    return streams.finished(ended)


class Workspace:
    """A fresh, empty folder the agent works in, in this process's folder of attempts (the
    agent is shown it alone: drivers.confine); removed afterwards."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="benchrig-agent-", dir=attempts_folder()))

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def read(self, relative: str, cap: int = SOLUTION_CAP_BYTES) -> tuple[str | None, str]:
        """(text, how it went) for a file the agent wrote: only a regular UTF-8 file inside the
        workspace, reached without following any symbolic link, at most `cap` bytes."""
        return read_regular_file(self.path, relative, cap)


def read_regular_file(root: Path, relative: str, cap: int) -> tuple[str | None, str]:
    path = PurePosixPath(relative)
    if path.is_absolute() or not path.parts or ".." in path.parts:
        return None, "refused: the path leaves the workspace"
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    opened: list[int] = []
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        opened.append(folder)
        for part in path.parts[:-1]:
            folder = os.open(part, flags | os.O_DIRECTORY, dir_fd=folder)
            opened.append(folder)
        fd = os.open(path.parts[-1], flags | os.O_NONBLOCK, dir_fd=folder)
        opened.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "refused: not a regular file"
        data = b""
        while len(data) <= cap:
            chunk = os.read(fd, cap + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except FileNotFoundError:
        return None, "absent"
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return None, "refused: a symbolic link or not a folder on the way"
        return None, f"unreadable: {exc.strerror}"
    finally:
        for fd in reversed(opened):
            os.close(fd)
    if len(data) > cap:
        return None, f"refused: larger than {cap} bytes"
    try:
        return data.decode("utf-8"), f"read ({len(data)} bytes)"
    except UnicodeDecodeError:
        return None, "refused: not UTF-8 text"
