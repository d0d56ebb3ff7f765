"""Runs untrusted candidate code in a confined process and talks to it only in plain data.

`isolation` decides how the process is confined (bubblewrap under a dedicated uid when
the machine allows it); `sandbox_child` is the program it runs: it sets its resource
limits, says hello, then imports the candidate. The parent sends calls over a private
pipe pair and reads replies with a deadline; it never trusts anything the child says
beyond plain values (see `sandbox_codec`). The candidate's stdout/stderr are drained by
threads and kept, capped, as evidence; they never decide anything. Stopping a candidate
kills all it started and checks that nothing is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig import isolation, sandbox_child, sandbox_codec
from benchrig.errors import SandboxError
from benchrig.isolation import Confinement

MAX_REPLY_BYTES = 16 * 1024 * 1024
OUTPUT_CAP_BYTES = 64 * 1024
STARTUP_TIMEOUT_S = 30.0  # the sandbox's own start-up, before any candidate code runs
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits for one candidate process."""

    cpu_s: int = 60
    address_space_mb: int = 2048
    file_size_mb: int = 16
    open_files: int = 64
    processes: int = 64  # per sandbox uid; root ignores it (hence the dedicated uid)
    scratch_mb: int = 32  # each writable tmpfs under bubblewrap (/sandbox, /tmp)

    def rlimits(self) -> dict[str, int]:
        return {"cpu_s": self.cpu_s, "address_space": self.address_space_mb * MB,
                "file_size": self.file_size_mb * MB, "open_files": self.open_files,
                "processes": self.processes, "core": 0}


@dataclass(frozen=True)
class Box:
    """One attempt's sandbox: how it is confined, the uid it runs as and its folder."""

    confinement: Confinement
    uid: int | None
    folder: Path
    module_file: str

    @classmethod
    def create(cls, confinement: Confinement, code: str, module_file: str) -> Box:
        uid = isolation.allocate_uid(confinement)
        folder = isolation.prepare_folder(confinement, uid, code, module_file)
        return cls(confinement, uid, folder, module_file)

    def remove(self) -> list[str]:
        """Delete the folder, and without namespaces what the uid left elsewhere (after
        `CandidateProcess.stop` proved no process of it runs); returns those leftovers."""
        isolation.remove_folder(self.folder)
        if self.uid is None or self.confinement.namespaces:
            return []
        return isolation.sweep_files(self.uid) + isolation.sweep_ipc(self.uid)


class CandidateFailure(Exception):
    """The candidate process cannot answer: it died, hung, or said something malformed."""


class CandidateTimeout(CandidateFailure):
    pass


class CandidateDied(CandidateFailure):
    pass


class ProtocolViolation(CandidateFailure):
    pass


def exit_message(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"candidate process was killed by {signal.Signals(-code).name}"
    return f"candidate process exited with code {code}"


def child_source() -> str:
    """The program the sandbox runs: the codec's source, then the child server's."""
    codec = Path(sandbox_codec.__file__).read_text(encoding="utf-8")
    child = Path(sandbox_child.__file__).read_text(encoding="utf-8")
    return f"CODEC_SOURCE = {codec!r}\n" + child.replace("from __future__ import annotations\n", "")


_CHILD_SOURCE: str | None = None


class OutputTap:
    """Drains one pipe in a thread, keeping the first OUTPUT_CAP_BYTES and a byte count."""

    def __init__(self, stream: Any) -> None:
        self.kept = bytearray()
        self.total = 0
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(65536):
                self.total += len(chunk)
                room = OUTPUT_CAP_BYTES - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        with contextlib.suppress(OSError):
            stream.close()

    def text(self) -> str:
        self._thread.join(timeout=1.0)
        note = f"\n[… {self.total - len(self.kept)} more bytes dropped]" if self.total > len(
            self.kept) else ""
        return self.kept.decode("utf-8", errors="replace") + note


class CandidateProcess:
    """One live candidate process and the pipe pair that carries calls to it."""

    def __init__(self, box: Box, limits: Limits) -> None:
        global _CHILD_SOURCE
        if _CHILD_SOURCE is None:
            _CHILD_SOURCE = child_source()
        self.box = box
        conf = box.confinement
        if not conf.dedicated_uid and os.geteuid() != 0:
            isolation.hide_from_same_uid()
        self._next_id = 0
        self._control: int | None = None
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        passed = [to_child_r, from_child_w]
        module_path = isolation.module_path(conf, box.folder, box.module_file)
        # -u: what it printed before a kill is still evidence; -B: no .pyc files
        program = ["-I", "-S", "-u", "-B", "-c", _CHILD_SOURCE,
                   "keep" if conf.keeper else "serve", str(to_child_r), str(from_child_w),
                   module_path, json.dumps(limits.rlimits())]
        if conf.keeper:
            control_r, self._control = os.pipe()
            passed.append(control_r)
            program.append(str(control_r))
        start = isolation.launch(conf, box.uid, box.folder, box.module_file, limits.scratch_mb,
                                 program)
        try:
            self.proc = subprocess.Popen(
                start.argv, cwd=start.cwd, env=start.env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=passed,
                start_new_session=True)
        except OSError as exc:
            for fd in (self._to_child, self._from_child, self._control):
                if fd is not None:
                    os.close(fd)
            raise SandboxError(f"cannot start the sandbox: {exc}") from None
        finally:
            for fd in passed:
                os.close(fd)
        self.stdout = OutputTap(self.proc.stdout)
        self.stderr = OutputTap(self.proc.stderr)
        self.hello = self._hello()

    def _hello(self) -> dict[str, Any]:
        """The sandbox's first words, sent before any candidate code runs."""
        began = time.monotonic()
        try:
            size = int.from_bytes(self._read(4, began + STARTUP_TIMEOUT_S), "big")
            hello = json.loads(self._read(min(size, 4096), began + STARTUP_TIMEOUT_S))
            if size > 4096 or type(hello) is not dict or type(hello.get("hello")) is not dict:
                raise ValueError("not a hello")
        except (CandidateFailure, ValueError) as exc:
            self.stop()
            why = self.stderr.text().strip() or str(exc)
            raise SandboxError(f"the sandbox did not start: {why[-2000:]}") from None
        self.startup_s = time.monotonic() - began
        return dict(hello["hello"])

    def request(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply, at most `timeout_s` seconds."""
        deadline = time.monotonic() + timeout_s
        self._next_id += 1
        message = {**message, "id": self._next_id}
        data = json.dumps(message, allow_nan=False).encode("utf-8")
        self._write(len(data).to_bytes(4, "big") + data, deadline)
        size = int.from_bytes(self._read(4, deadline), "big")
        if size > MAX_REPLY_BYTES:
            raise ProtocolViolation(f"reply of {size} bytes exceeds the {MAX_REPLY_BYTES} cap")
        try:
            reply = json.loads(self._read(size, deadline))
        except (ValueError, RecursionError) as exc:
            raise ProtocolViolation(f"malformed reply: {exc}") from None
        if type(reply) is dict and set(reply) == {"exit"} and type(reply["exit"]) is int:
            raise CandidateDied(exit_message(reply["exit"]))  # the keeper saw it end
        if type(reply) is not dict or reply.get("id") != self._next_id:
            raise ProtocolViolation("reply does not answer the request that was sent")
        return reply

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(self._to_child, select.POLLOUT, deadline)
            try:
                view = view[os.write(self._to_child, view):]
            except OSError:
                raise self._died() from None

    def _read(self, size: int, deadline: float) -> bytes:
        chunks: list[bytes] = []
        while size:
            self._wait(self._from_child, select.POLLIN, deadline)
            chunk = os.read(self._from_child, min(size, 1 << 20))
            if not chunk:
                raise self._died()
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _wait(self, fd: int, event: int, deadline: float) -> None:
        poller = select.poll()
        poller.register(fd, event)
        if not poller.poll(self._left(deadline) * 1000):
            raise CandidateTimeout("timed out")

    @staticmethod
    def _left(deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CandidateTimeout("timed out")
        return left

    def _died(self) -> CandidateDied:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return CandidateDied("candidate closed its channel")
        if code > 128 and self.box.confinement.namespaces:
            code = 128 - code  # bubblewrap reports a child killed by signal N as 128 + N
        return CandidateDied(exit_message(code))

    def stop(self) -> str | None:
        """Kill everything the candidate started and check it is gone.

        Returns None when that is proven, else why not. With a dedicated uid the proof is a
        sweep of the uid (raising SandboxError if anything survives SIGKILL); without one,
        it is the keeper's report that it has no descendant left.
        """
        conf = self.box.confinement
        problem: str | None = None
        if conf.keeper:
            problem = self._stop_keeper()
        else:
            if conf.namespaces:  # pid 1 of the namespace first: its death empties it
                for pid in isolation.children_of(self.proc.pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            self._kill_group()
            if self.box.uid is not None:
                isolation.sweep_uid(self.box.uid)
        for fd in (self._to_child, self._from_child, self._control):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return problem

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)

    def _stop_keeper(self) -> str | None:
        if not self.box.confinement.namespaces:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, signal.SIGUSR1)
        assert self._control is not None
        with contextlib.suppress(OSError):
            os.close(self._control)
        self._control = None
        try:
            code = self.proc.wait(timeout=isolation.SWEEP_TIMEOUT_S + 2)
        except subprocess.TimeoutExpired:
            code = None
        self._kill_group()
        if code == 0:
            return None
        why = {None: "the keeper did not finish", 70: "no subreaper on this system",
               71: "descendants survived SIGKILL"}.get(code, f"the keeper ended with {code}")
        return f"cleanup could not be verified: {why}"
