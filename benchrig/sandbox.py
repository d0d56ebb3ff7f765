"""Runs untrusted candidate code in a separate process and talks to it only in plain data.

The candidate's module is imported by `sandbox_child` inside a subprocess in its own
session, with resource limits and a cleared environment. The parent sends calls over a
private pipe pair and reads replies with a deadline; it never trusts anything the child
says beyond plain values (see `sandbox_codec`). The candidate's stdout/stderr are drained
by threads and kept, capped, as evidence; they never decide anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig import sandbox_child, sandbox_codec

MAX_REPLY_BYTES = 16 * 1024 * 1024
OUTPUT_CAP_BYTES = 64 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits for one candidate process."""

    cpu_s: int = 60
    address_space_mb: int = 2048
    file_size_mb: int = 16
    open_files: int = 64
    processes: int = 64


class CandidateFailure(Exception):
    """The candidate process cannot answer: it died, hung, or said something malformed."""


class CandidateTimeout(CandidateFailure):
    pass


class CandidateDied(CandidateFailure):
    pass


class ProtocolViolation(CandidateFailure):
    pass


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


def _limit_self(limits: Limits) -> None:
    """Runs in the child between fork and exec: resource limits, no core dumps."""
    mb = 1024 * 1024
    for kind, value in (
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_AS, limits.address_space_mb * mb),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    ):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (value, value))


def clean_env(workdir: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "LANG": "C.UTF-8",
    }


class CandidateProcess:
    """One live candidate process and the pipe pair that carries calls to it."""

    def __init__(self, workdir: Path, module_file: str, limits: Limits) -> None:
        global _CHILD_SOURCE
        if _CHILD_SOURCE is None:
            _CHILD_SOURCE = child_source()
        self.workdir = workdir
        self._next_id = 0
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        command = [
            # -u: what it printed before a kill is still evidence; -B: no .pyc files
            sys.executable, "-I", "-S", "-u", "-B", "-c", _CHILD_SOURCE,
            str(to_child_r), str(from_child_w), str(workdir / module_file),
        ]
        try:
            self.proc = subprocess.Popen(
                command,
                cwd=workdir,
                env=clean_env(workdir),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(to_child_r, from_child_w),
                start_new_session=True,
                preexec_fn=lambda: _limit_self(limits),
            )
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.stdout = OutputTap(self.proc.stdout)
        self.stderr = OutputTap(self.proc.stderr)

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
        if type(reply) is not dict or reply.get("id") != self._next_id:
            raise ProtocolViolation("reply does not answer the request that was sent")
        return reply

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            if not select.select([], [self._to_child], [], self._left(deadline))[1]:
                raise CandidateTimeout("timed out")
            try:
                view = view[os.write(self._to_child, view):]
            except (BrokenPipeError, OSError):
                raise self._died() from None

    def _read(self, size: int, deadline: float) -> bytes:
        chunks: list[bytes] = []
        while size:
            if not select.select([self._from_child], [], [], self._left(deadline))[0]:
                raise CandidateTimeout("timed out")
            chunk = os.read(self._from_child, min(size, 1 << 20))
            if not chunk:
                raise self._died()
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

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
        if code < 0:
            return CandidateDied(f"candidate process was killed by {signal.Signals(-code).name}")
        return CandidateDied(f"candidate process exited with code {code}")

    def kill(self) -> None:
        """SIGKILL the whole session, reap the child, close the channel."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
