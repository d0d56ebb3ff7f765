"""One candidate process in its sandbox, talked to only in plain data.

`confinement` decides how the process is confined (bubblewrap under a dedicated uid when
the machine allows it); `child` is the program it runs: it sets its resource
limits, says hello, then imports the candidate. The parent sends calls over a private
pipe pair and reads replies with a deadline; it never trusts anything the child says
beyond plain values (see `codec`). The candidate's stdout/stderr are drained in
the same poll loop and kept, capped, as evidence; they never decide anything. Stopping a
candidate kills all it started and checks that nothing is left.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import marshal
import math
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

from benchrig.core.errors import SandboxError
from benchrig.sandbox import child, codec, confinement, proof
from benchrig.sandbox.census import Census
from benchrig.sandbox.confinement import Confinement

MAX_REPLY_BYTES = 16 * 1024 * 1024
# Parsing JSON costs the judge ~80 bytes and a few hundred ns per value, whatever the byte
# count: 16 MiB of `[],` is 5.6 million lists (~800 MB, seconds of CPU). A reply may
# build at most this many values and keys (see reply_values): ~10x the byte cap at worst.
MAX_REPLY_VALUES = 1_000_000
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
    """Where one candidate process lives: how it is confined, its uid, its host folder."""

    confinement: Confinement
    uid: int | None  # a fresh uid of its own, when root allows it
    folder: Path | None  # on the host, only without namespaces (else a tmpfs inside)
    module_file: str
    # the pool's census its uid came from, and which its sweep feeds (None: walk alone)
    census: Census | None = field(default=None, compare=False, repr=False)

    @classmethod
    def create(cls, conf: Confinement, module_file: str, census: Census | None = None) -> Box:
        uid = confinement.allocate_uid(conf) if census is None else census.allocate(conf)
        return cls(conf, uid, confinement.prepare_folder(conf, uid), module_file, census)

    def sweep(self) -> int:
        """SIGKILL every process of its uid until none is left (the census keeps the walk)."""
        assert self.uid is not None
        if self.census is None:
            return confinement.sweep_uid(self.uid)
        return self.census.sweep(self.uid)

    def remove(self) -> list[str]:
        """Delete its folder, and without namespaces what its uid left elsewhere (after
        `CandidateProcess.stop` proved no process of it runs); returns those leftovers."""
        if self.folder is not None:
            confinement.remove_folder(self.folder)
        if self.uid is None or self.confinement.namespaces:
            return []
        return confinement.sweep_files(self.uid) + confinement.sweep_ipc(self.uid)


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


@functools.cache
def child_source() -> str:
    """The program the sandbox runs: the codec, then the child server, as one module; read
    from disk once per process (before any agent runs: see benchrig.checks.load_checks)."""
    future = "from __future__ import annotations\n"
    parts = [Path(m.__file__).read_text(encoding="utf-8").replace(future, "", 1)
             for m in (codec, child) if m.__file__]
    return future + "\n".join(parts)


BOOT = "import marshal,sys;exec(marshal.loads(bytes.fromhex(sys.argv.pop(1))))"
COMPILER = ("import marshal,sys;sys.stdout.write(marshal.dumps(compile("
            "sys.argv[1],'sandbox_child','exec')).hex())")
_PROGRAMS: dict[str, list[str]] = {}
_COMPILING: dict[str, tuple[subprocess.Popen[bytes], IO[bytes]]] = {}
_SOURCE_ONCE: set[str] = set()  # interpreters whose first sandbox got the source
_PROGRAMS_LOCK = threading.Lock()


def child_program(interpreter: str) -> list[str]:
    """Arguments that run the child: its code compiled by the interpreter that runs it,
    once that is ready, else its source.

    Compiling ~20 KB of source costs every start several milliseconds; unmarshalling the
    code object costs a fraction of one. Bytecode is version-specific, hence compiled by
    that interpreter, in a process of its own started with the second sandbox (a run of
    one attempt never needs it; the first sandboxes compile the source themselves, sooner
    than that process would start). If compiling fails, the source is passed as it is.
    """
    with _PROGRAMS_LOCK:  # the launcher thread and a cold start may ask at once
        return _child_program(interpreter)


def _child_program(interpreter: str) -> list[str]:
    if interpreter in _PROGRAMS:
        return _PROGRAMS[interpreter]
    source = ["-c", child_source()]
    if interpreter not in _COMPILING:
        if interpreter not in _SOURCE_ONCE:
            _SOURCE_ONCE.add(interpreter)
            return source
        # a file: a pipe would fill up before anyone reads it; closed when it is read
        output = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            job = subprocess.Popen([interpreter, "-I", "-S", "-c", COMPILER, child_source()],
                                   stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=subprocess.DEVNULL)
        except OSError:
            output.close()
            _PROGRAMS[interpreter] = source
            return source
        if not _COMPILING:
            atexit.register(_end_compiling)
        _COMPILING[interpreter] = (job, output)
        return source
    job, written = _COMPILING[interpreter]
    if job.poll() is None:
        return source
    del _COMPILING[interpreter]
    with written:
        written.seek(0)
        compiled = written.read().decode("ascii", "replace").strip()
    _PROGRAMS[interpreter] = ["-c", BOOT, compiled] if job.returncode == 0 and compiled \
        else source
    return _PROGRAMS[interpreter]


def _end_compiling() -> None:
    """At exit: a compiler still running is stopped and reaped (it leaves nothing behind)."""
    for job, output in _COMPILING.values():
        with contextlib.suppress(OSError):
            job.kill()
        job.wait()
        output.close()
    _COMPILING.clear()


class Output:
    """One of the candidate's output pipes: the first OUTPUT_CAP_BYTES kept, the rest counted."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)
        self.kept = bytearray()
        self.total = 0
        self.closed = False

    def drain(self, chunks: int = 16) -> None:
        """Read what is there now, at most `chunks` reads (never blocks, and a flood from
        many writers cannot keep the caller from its deadline); memory stays bounded."""
        for _ in range(chunks):
            if self.closed:
                return
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                os.close(self.fd)
                return
            self.total += len(chunk)
            room = OUTPUT_CAP_BYTES - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def finish(self, timeout_s: float) -> None:
        """Read to the end (every writer is dead by now), at most `timeout_s` seconds."""
        if self.closed:
            return
        deadline = time.monotonic() + timeout_s
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self.closed and time.monotonic() < deadline:
            poller.poll(max(0.0, deadline - time.monotonic()) * 1000)
            self.drain()
        if not self.closed:
            self.closed = True
            os.close(self.fd)

    def text(self) -> str:
        dropped = self.total - len(self.kept)
        note = f"\n[… {dropped} more bytes dropped]" if dropped else ""
        return self.kept.decode("utf-8", errors="replace") + note


_WINDOW = 1 << 16


def _separators(data: bytes) -> int:
    return len(data) - len(data.translate(None, b"[{,:"))  # one pass: 4 counts take 3x longer


def reply_values(raw: bytes, limit: int = MAX_REPLY_VALUES) -> int:
    """An upper bound on the values and keys json.loads would build from ASCII JSON `raw`
    (each follows a `[ { , :` or is the first): one plus those outside strings. Counted at
    C speed in bounded memory; stops early once past `limit`."""
    if len(raw) < limit:  # the usual reply: too short to hold `limit` separators
        return len(raw) + 1
    found = _separators(raw)
    if found < limit:  # no need to tell strings apart
        return found + 1
    # Without escape pairs (`\\\\`, then `\\"`) every `"` opens or closes a string.
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    found, inside = 0, 0
    for start in range(0, len(plain), _WINDOW):
        parts = plain[start:start + _WINDOW].split(b'"')
        found += _separators(b"".join(parts[inside::2]))
        inside ^= (len(parts) - 1) & 1
        if found >= limit:
            break
    return found + 1


def parse_reply(raw: bytes) -> Any:
    """The JSON value of one reply frame, refused as ProtocolViolation before it is built
    if it is not ASCII (what the child writes) or would build over MAX_REPLY_VALUES."""
    if not raw.isascii():
        raise ProtocolViolation("malformed reply: not ASCII JSON (refused unparsed)")
    if reply_values(raw) > MAX_REPLY_VALUES:
        raise ProtocolViolation(f"the candidate's reply is too large: over {MAX_REPLY_VALUES:,}"
                                f" JSON values in {len(raw):,} bytes (refused unparsed)")
    try:  # as text: json.loads would read bytes with NULs in them as UTF-16 or UTF-32
        return json.loads(raw.decode("ascii"))
    except (ValueError, RecursionError) as exc:
        raise ProtocolViolation(f"malformed reply: {exc}") from None


class CandidateProcess:
    """One live candidate process and the pipe pair that carries calls to it."""

    def __init__(self, box: Box, limits: Limits) -> None:
        self.box = box
        conf = box.confinement
        if not conf.dedicated_uid and os.geteuid() != 0:
            confinement.hide_from_same_uid()
        self._next_id = 0
        self._control: int | None = None
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        passed = [to_child_r, from_child_w]
        module_path = confinement.module_path(conf, box.folder, box.module_file)
        # -u: what it printed before a kill is still evidence; -B: no .pyc files
        program = ["-I", "-S", "-u", "-B", *child_program(conf.interpreter),
                   "keep" if conf.keeper else "serve", str(to_child_r), str(from_child_w),
                   module_path, ",".join(f"{k}={v}" for k, v in limits.rlimits().items())]
        if conf.keeper:
            control_r, self._control = os.pipe()
            passed.append(control_r)
            program.append(str(control_r))
        start = confinement.launch(conf, box.uid, box.folder, limits.scratch_mb, program)
        try:
            self.proc = subprocess.Popen(
                start.argv, cwd=start.cwd, env=start.env, stdin=subprocess.DEVNULL,
                stdout=out_w, stderr=err_w, pass_fds=passed, start_new_session=True)
        except OSError as exc:
            for fd in (self._to_child, self._from_child, self._control, out_r, err_r):
                if fd is not None:
                    os.close(fd)
            proof.forget()
            raise SandboxError(f"cannot start the sandbox: {exc}") from None
        finally:
            for fd in (*passed, out_w, err_w):
                os.close(fd)
        self.stdout, self.stderr = Output(out_r), Output(err_r)
        self.hello: dict[str, Any] | None = None
        self.cpu_s: float | None = None  # its processes' CPU time, read when it is stopped
        self._killed = False
        self._reaped = False  # reap() ran (its fds are closed: never twice)
        # its uid was swept by reap() itself: a later sweep could kill that uid's next holder
        self.swept = False
        self._problem: str | None = None  # what that reap() returned
        self._inside: list[int] = []  # its pid 1, when it was killed
        # Its exit as something poll() can wait on: no sleep loop (Popen.wait polls)
        self._exit_fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):  # Linux 5.3+
            self._exit_fd = os.pidfd_open(self.proc.pid)

    def ready(self, until: float = math.inf) -> dict[str, Any]:
        """The sandbox's first words, sent before any candidate code runs (read once).

        Waited for at most STARTUP_TIMEOUT_S, and never past `until` (time.monotonic: the
        attempt's end): a start-up still under way then raises CandidateTimeout, the
        attempt's timeout and not the sandbox's failure; the caller stops this process."""
        if self.hello is None:
            self.hello = self._hello(until)
        return self.hello

    def _hello(self, until: float) -> dict[str, Any]:
        began = time.monotonic()  # a generous allowance: no candidate code has run yet
        deadline = min(began + STARTUP_TIMEOUT_S, until)
        try:
            size = int.from_bytes(self._read(4, deadline), "big")
            hello = json.loads(self._read(min(size, 4096), deadline))
            if size > 4096 or type(hello) is not dict or type(hello.get("hello")) is not dict:
                raise ValueError("not a hello")
        except CandidateTimeout:
            if deadline < began + STARTUP_TIMEOUT_S:  # the attempt ended first
                raise CandidateTimeout("timed out (the sandbox was still starting at the "
                                       "attempt's end)") from None
            self._refuse("timed out")
        except (CandidateFailure, ValueError) as exc:
            self._refuse(str(exc))
        said = dict(hello["hello"])
        uid, pid = self.box.uid, said.get("pid")
        problem = None
        if uid is not None and said.get("uid") != uid:
            problem = f"it runs as uid {said.get('uid')}, not its own uid {uid}"
        elif self.box.confinement.namespaces and not (type(pid) is int and pid <= 3):
            problem = f"its pid is {pid}: it is not in a pid namespace of its own"
        if problem is not None:  # the confinement is not what it claims: no candidate runs
            self.stop()
            proof.forget()
            raise SandboxError(f"the sandbox is not confined as expected: {problem}")
        return said

    def _refuse(self, reason: str) -> NoReturn:
        """The sandbox did not start: BenchRig's failure, never a verdict."""
        self.stop()
        proof.forget()  # the next process tries the confinement again
        why = self.stderr.text().strip() or reason
        raise SandboxError(f"the sandbox did not start: {why[-2000:]}") from None

    def request(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply, at most `timeout_s` seconds."""
        deadline = time.monotonic() + timeout_s
        return self.receive(self.send(message, deadline), deadline)

    def send(self, message: dict[str, Any], deadline: float) -> int:
        """Write one request (by `deadline`, time.monotonic); its id, for `receive`. A batch
        (`{"op": "batch", "calls": [...]}`) is answered by one reply per call, in order."""
        self._next_id += 1
        message = {**message, "id": self._next_id}
        data = marshal.dumps(message)  # the child reads this trusted side without `json`
        self._write(len(data).to_bytes(4, "big") + data, deadline)
        return self._next_id

    def receive(self, ident: int, deadline: float, index: int | None = None) -> dict[str, Any]:
        """The next reply, which must answer request `ident` (call `index` of a batch)."""
        size = int.from_bytes(self._read(4, deadline), "big")
        if size > MAX_REPLY_BYTES:
            raise ProtocolViolation(f"reply of {size} bytes exceeds the {MAX_REPLY_BYTES} cap")
        reply = parse_reply(self._read(size, deadline))
        if time.monotonic() > deadline:  # parsing is the check's time too, as a hang is
            raise CandidateTimeout("timed out (while parsing the candidate's reply)")
        if type(reply) is dict and set(reply) == {"exit"} and type(reply["exit"]) is int:
            raise CandidateDied(exit_message(reply["exit"]))  # the keeper saw it end
        if type(reply) is not dict or reply.get("id") != ident or (
                index is not None and reply.get("index") != index):
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
        """Until `fd` is ready, draining the candidate's output meanwhile (it must never
        block on a full pipe while we wait for its reply)."""
        poller = select.poll()
        poller.register(fd, event)
        outputs = {o.fd: o for o in (self.stdout, self.stderr) if not o.closed}
        for out in outputs.values():
            poller.register(out.fd, select.POLLIN)
        while True:
            ready = poller.poll(self._left(deadline) * 1000)
            if not ready:
                raise CandidateTimeout("timed out")
            for ready_fd, _ in ready:
                if ready_fd in outputs:
                    outputs[ready_fd].drain()
                    if outputs[ready_fd].closed:
                        poller.unregister(ready_fd)
                        del outputs[ready_fd]
            if any(ready_fd == fd for ready_fd, _ in ready):
                return

    @staticmethod
    def _left(deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CandidateTimeout("timed out")
        return left

    def _wait_exit(self, timeout_s: float) -> int | None:
        """Reap the sandbox's first process if it ends within `timeout_s`; its exit code."""
        if self._exit_fd is not None and self.proc.returncode is None:
            poller = select.poll()
            poller.register(self._exit_fd, select.POLLIN)
            poller.poll(timeout_s * 1000)  # readable as soon as it has exited
            return self.proc.poll()
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def _died(self) -> CandidateDied:
        code = self._wait_exit(1.0)
        if code is None:
            return CandidateDied("candidate closed its channel")
        if code > 128 and self.box.confinement.namespaces:
            code = 128 - code  # bubblewrap reports a child killed by signal N as 128 + N
        return CandidateDied(exit_message(code))

    @property
    def kill_is_final(self) -> bool:
        """Whether `kill` alone dooms every process of the sandbox: in a pid namespace of its
        own, under a uid of its own, SIGKILL to its pid 1 (or to bubblewrap before there is
        one) ends them all, and none can reach another sandbox meanwhile. Then waiting for
        bubblewrap and sweeping the uid (`reap`) may happen off the attempt's path."""
        conf = self.box.confinement
        return conf.namespaces and conf.dedicated_uid

    def stop(self) -> str | None:
        """Kill everything the candidate started, check it is gone, collect its output.

        Returns None when that is proven, else why not. With a dedicated uid the proof is a
        sweep of the uid (raising SandboxError if anything survives SIGKILL); without one,
        it is the keeper's report that it has no descendant left.
        """
        self.kill()
        return self.reap()

    def kill(self) -> None:
        """The attempt's part of stopping: its CPU read, and, where that is final
        (`kill_is_final`), SIGKILL sent to the sandbox's pid 1 (or to bubblewrap before it
        has one) and the output read as far as it is there. Never waits for a process."""
        if self._killed:
            return
        self._killed = True
        if self.proc.returncode is None:  # before anything is killed
            self.cpu_s = confinement.tree_cpu_s(self.proc.pid)
        if not self.kill_is_final:
            return
        # SIGKILL pid 1 of the namespace: the kernel kills everything in it, and bubblewrap's
        # monitor exits once it has reaped that pid 1 (`reap` waits for it). A sandbox that
        # has not forked its pid 1 yet (a spare just started) has nothing inside: bubblewrap
        # itself is killed at once (its process group; its pid is ours until it is reaped).
        self._inside = confinement.children_of(self.proc.pid)
        for pid in self._inside:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if not self._inside:
            self._signal_group()
        for out in (self.stdout, self.stderr):
            out.drain()  # what it printed before its last reply is in the pipe by now

    def abort(self) -> None:
        """From another thread, when the attempt is stopped: SIGKILL the sandbox's processes
        and change nothing else, so a call of the owner's blocked on it returns (its pipe
        closes); the owner then stops it as after any crash."""
        for pid in confinement.children_of(self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._signal_group()

    def reap(self, sweep: bool = True) -> str | None:
        """Everything `stop` does after `kill`: wait for bubblewrap, sweep the uid (raising
        SandboxError if a process survives SIGKILL), close the pipes, finish the output.
        With `sweep` False the caller sweeps the uid itself, after this returns (the pool's
        reaper sweeps every sandbox it has queued with one walk of /proc).
        Once: a second call (a sandbox refused at its hello, then released) returns the first
        one's answer and closes nothing again — that fd number may be another thread's now."""
        self.kill()
        if self._reaped:
            return self._problem
        self._reaped = True
        conf = self.box.confinement
        problem: str | None = None
        try:
            if conf.keeper:
                problem = self._stop_keeper()
            else:
                if conf.namespaces and not self.kill_is_final:  # killed here, not in kill()
                    self._inside = confinement.children_of(self.proc.pid)
                    for pid in self._inside:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                if self._inside:
                    self._wait_exit(2.0)
                self._kill_group()
                if self.box.uid is not None:
                    if not conf.namespaces:  # no pid namespace to take them all down at once
                        confinement.kill_as(self.box.uid)
                    if sweep:
                        self.box.sweep()
                        self.swept = True
        finally:
            for fd in (self._to_child, self._from_child, self._control, self._exit_fd):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._control = self._exit_fd = None
            for out in (self.stdout, self.stderr):
                out.finish(0.2 if problem is None else 0.0)
        self._problem = problem
        return problem

    def _signal_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def _kill_group(self) -> None:
        self._signal_group()
        self._wait_exit(5.0)

    def _stop_keeper(self) -> str | None:
        if not self.box.confinement.namespaces:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, signal.SIGUSR1)
        assert self._control is not None
        with contextlib.suppress(OSError):
            os.close(self._control)
        self._control = None
        code = self._wait_exit(confinement.SWEEP_TIMEOUT_S + 2)
        self._kill_group()
        if code == 0:
            return None
        why = {None: "the keeper did not finish", 70: "no subreaper on this system",
               71: "descendants survived SIGKILL"}.get(code, f"the keeper ended with {code}")
        return f"cleanup could not be verified: {why}"
