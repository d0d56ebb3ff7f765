"""How a candidate is confined on this machine: bubblewrap under a fresh uid, or what is left.

Full isolation needs root (to drop to a dedicated, otherwise unused uid with setpriv) and
a bubblewrap that can create user, pid, net, ipc, uts and mount namespaces. Anything less
runs *degraded*: resource limits, a new session and a cleared environment always; a
dedicated uid when root; bubblewrap's namespaces when they work without root; and a
subreaper keeper that kills every descendant when there is no dedicated uid to sweep.
`detect()` tries the real thing once per process and says why it fell short.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Container
from dataclasses import dataclass, replace
from pathlib import Path

from benchrig import trusted
from benchrig.core.errors import SandboxError
from benchrig.sandbox import proof

FULL, DEGRADED, NONE = "full", "degraded", "none"
SANDBOX_DIR = "/sandbox"  # the candidate's folder as it sees it under bubblewrap
SYSTEM_PYTHON = "/usr/bin/python3"
# Dedicated uids come from a block no distribution hands out (and above subuid ranges).
UID_BLOCK = (1_900_000_000, 1 << 24)
SWEEP_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Confinement:
    """What confines a candidate here; `level` is what results record as `isolation`."""

    interpreter: str
    namespaces: bool  # bubblewrap: user, pid, net, ipc, uts and mount namespaces
    dedicated_uid: bool  # setpriv to a fresh unprivileged uid (needs root)
    bwrap: str | None = None
    setpriv: str | None = None
    bwrap_flags: tuple[str, ...] = ()
    uid_block: tuple[int, int] = UID_BLOCK
    reasons: tuple[str, ...] = ()  # why it is not full

    @property
    def level(self) -> str:
        return FULL if self.namespaces and self.dedicated_uid else DEGRADED

    @property
    def keeper(self) -> bool:
        """Without a uid of its own to sweep, a subreaper keeper must collect descendants."""
        return not self.dedicated_uid

    def without_namespaces(self, why: str = "namespaces turned off") -> Confinement:
        return replace(self, namespaces=False, reasons=(*self.reasons, why))

    def without_dedicated_uid(self, why: str = "dedicated uid turned off") -> Confinement:
        return replace(self, dedicated_uid=False, reasons=(*self.reasons, why))

    def describe(self) -> dict[str, object]:
        return {
            "isolation": self.level,
            "namespaces": self.namespaces,
            "dedicated_uid": self.dedicated_uid,
            "interpreter": self.interpreter,
            # the helpers that ran, resolved once in the system folders (benchrig.trusted)
            "bwrap": self.bwrap if self.namespaces else None,
            "setpriv": self.setpriv if self.dedicated_uid else None,
            "reasons": list(self.reasons),
        }


def uid_block(uid_map: str | None = None) -> tuple[int, int]:
    """UID_BLOCK if this root can switch to it, else the upper half of what uid_map grants."""
    try:
        text = Path("/proc/self/uid_map").read_text() if uid_map is None else uid_map
        ranges = [tuple(int(x) for x in line.split()) for line in text.splitlines()
                  if line.strip()]
    except (OSError, ValueError):
        return UID_BLOCK
    start, size = UID_BLOCK
    if any(inside <= start and start + size <= inside + count for inside, _, count in ranges):
        return UID_BLOCK
    inside, _, count = max(ranges, key=lambda r: r[2], default=(0, 0, 65536))
    half = count // 2  # the low half holds system and login users; stay clear of 65534
    return inside + half, max(1, min(half - 2, 1 << 24))


def _interpreter() -> str:
    """A Python every uid can run and bubblewrap can show: the system one under /usr."""
    if os.access(SYSTEM_PYTHON, os.X_OK):
        return SYSTEM_PYTHON
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def root_links() -> list[str]:
    """bubblewrap arguments recreating /bin, /lib… as on the host (links into /usr, or ro dirs)."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def namespace_args(conf: Confinement, scratch_mb: int) -> list[str]:
    """bubblewrap's command line: only /usr (read-only) and a folder of its own."""
    assert conf.bwrap is not None
    size = str(scratch_mb * 1024 * 1024)
    return [
        conf.bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
        "--unshare-uts", "--unshare-cgroup-try", *conf.bwrap_flags, "--die-with-parent",
        "--new-session", "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr", *root_links(),
        "--proc", "/proc", "--dev", "/dev",
        # Writable space is size-capped tmpfs only: nothing it writes reaches the host. Its
        # folder is one of them; the sandbox writes the candidate's module there itself.
        "--size", str(1024 * 1024), "--tmpfs", "/dev/shm",
        "--size", size, "--tmpfs", "/tmp",
        "--size", size, "--tmpfs", SANDBOX_DIR,
        "--remount-ro", "/dev", "--remount-ro", "/",
        "--clearenv", "--setenv", "HOME", SANDBOX_DIR, "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp",
        "--chdir", SANDBOX_DIR, "--",
    ]


def clean_env(workdir: Path) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(workdir), "LANG": "C.UTF-8"}


def module_path(conf: Confinement, folder: Path | None, module_file: str) -> str:
    """The candidate's module as its own process sees it."""
    if conf.namespaces:
        return f"{SANDBOX_DIR}/{module_file}"
    assert folder is not None
    return str(folder / module_file)


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    cwd: str
    env: dict[str, str]


def launch(conf: Confinement, uid: int | None, folder: Path | None, scratch_mb: int,
           program: list[str]) -> Launch:
    """The command that starts `program` (interpreter arguments) confined as `conf` says."""
    prefix: list[str] = []
    if conf.dedicated_uid:
        assert conf.setpriv is not None and uid is not None
        prefix = [conf.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                  "--no-new-privs", "--"]
    python = [conf.interpreter, *program]
    if conf.namespaces:
        return Launch([*prefix, *namespace_args(conf, scratch_mb), *python], "/", {})
    assert folder is not None
    return Launch([*prefix, *python], str(folder), clean_env(folder))


def _reachable_by_others(path: str) -> bool:
    """Every directory from / down to `path` lets other uids through."""
    current = Path(path).resolve()
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in (current, *current.parents))
    except OSError:
        return False


def _folder_parent(conf: Confinement) -> str | None:
    """Where sandbox folders go: the temp dir, unless a dedicated uid could not reach it."""
    if not conf.dedicated_uid:
        return None
    for base in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        if _reachable_by_others(base):
            return base
    raise SandboxError("no temporary directory the sandbox uid can reach (TMPDIR, /tmp)")


def prepare_folder(conf: Confinement, uid: int | None) -> Path | None:
    """Without namespaces, a fresh host folder for the candidate (its uid owns it)."""
    if conf.namespaces:
        return None  # its folder is a tmpfs inside the sandbox
    folder = Path(tempfile.mkdtemp(prefix="benchrig-sandbox-", dir=_folder_parent(conf)))
    if conf.dedicated_uid and uid is not None:
        os.chown(folder, uid, uid)
    return folder


def remove_folder(folder: Path) -> None:
    """Delete a folder the candidate may have filled: never follows a link it planted."""
    top = str(folder)

    def unlock(_func: object, path: str, _exc: object) -> None:
        # Only a shared uid can lock its owner out of a directory it made (root ignores
        # modes): reopen that directory without following links and chmod that very
        # inode. Never anything outside the folder.
        for target in (os.path.dirname(path), path):
            if target != top and not target.startswith(top + os.sep):
                continue
            with contextlib.suppress(OSError):
                fd = os.open(target, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
                try:
                    os.chmod(f"/proc/self/fd/{fd}", 0o700)
                finally:
                    os.close(fd)

    if not os.path.isdir(top) or os.path.islink(top):
        return  # gone, or swapped for a link by its owner: nothing of ours to delete
    shutil.rmtree(folder, onerror=unlock)
    shutil.rmtree(folder, ignore_errors=True)


def live_processes() -> dict[int, int]:
    """pid → real uid of every process that is not a zombie (read from /proc/<pid>/status).

    The status file, not the owner of /proc/<pid>: a process that makes itself
    non-dumpable shows root as that owner, but its Uid line still tells the truth.
    """
    found: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/status", os.O_RDONLY)
        except OSError:
            continue
        try:
            status = os.read(fd, 2048)  # Name, State … Uid come first
        except OSError:
            continue
        finally:
            os.close(fd)
        state = status.partition(b"\nState:\t")[2][:1]
        uid = status.partition(b"\nUid:\t")[2].split(b"\t", 1)[0]
        if state not in (b"Z", b"X") and uid.isdigit():
            found[int(name)] = int(uid)
    return found


SHARED_SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock")
IPC_KINDS = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}


def sweep_files(uid: int) -> list[str]:
    """Remove what `uid` left at the top of the world-writable folders (degraded mode).

    Without a mount namespace the candidate can write to /tmp and friends, and a host
    process could later import or trust what it left there. Its uid is dedicated to this
    attempt and all its processes are dead, so whatever that uid owns is its leftover.
    """
    removed: list[str] = []
    folders = {os.path.realpath(p) for p in (*SHARED_SCRATCH, tempfile.gettempdir())}
    for folder in sorted(folders):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)  # fd-based: never follows a planted link
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
            removed.append(entry.path)
    return removed


def ipc_objects(uid: int) -> list[tuple[str, int]]:
    """System V shared memory, queues and semaphores owned by `uid` (they outlive processes)."""
    found: list[tuple[str, int]] = []
    for kind in IPC_KINDS:
        try:
            header, *rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        key = "shmid" if kind == "shm" else ("msqid" if kind == "msg" else "semid")
        for row in rows:
            cells = dict(zip(names, row.split(), strict=False))
            if cells.get("uid") == str(uid) and cells.get(key, "").isdigit():
                found.append((kind, int(cells[key])))
    return found


def sweep_ipc(uid: int) -> list[str]:
    """Remove the System V IPC objects `uid` left (degraded mode: no IPC namespace)."""
    objects = ipc_objects(uid)
    if not objects:
        return []
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, ident in objects:
        if kind == "sem":
            libc.semctl(ident, 0, 0)  # IPC_RMID
        else:
            getattr(libc, IPC_KINDS[kind])(ident, 0, None)
    return [f"sysv-{kind}:{ident}" for kind, ident in objects]


def allocate_uid(conf: Confinement) -> int | None:
    """A uid no process uses now, from the dedicated block; None without a dedicated uid."""
    if not conf.dedicated_uid:
        return None
    return pick_uid(conf.uid_block, set(live_processes().values()))


def pick_uid(block: tuple[int, int], used: Container[int]) -> int:
    """A random uid of `block` (base, size) that is not in `used`."""
    base, size = block
    for _ in range(100):
        uid = base + secrets.randbelow(size)
        if uid not in used:
            return uid
    raise SandboxError("no free uid in the sandbox block")


def kill_as(uid: int) -> None:
    """kill(-1, SIGKILL) from a process of `uid`: the kernel signals every process of that
    uid in one pass that no fork can slip through (a fork with a fatal signal pending
    fails), which a walk of /proc alone cannot promise against a fork-and-exit chain."""
    kill = trusted.program("kill")
    if kill is None:
        return  # the walk of /proc in sweep_uid still kills them, one by one
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([kill, "-KILL", "-1"], user=uid, group=uid, extra_groups=[],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={},
                       cwd="/", timeout=10, check=False)


def sweep_uid(uid: int, timeout_s: float = SWEEP_TIMEOUT_S,
              walk: Callable[[], dict[int, int]] | None = None) -> int:
    """SIGKILL every process of `uid` until none is left; returns how many had to be killed.

    The walk of /proc is the proof (`walk`: live_processes, or a census that keeps what it
    read); callers without a pid namespace call `kill_as` first."""
    return sweep_uids((uid,), timeout_s, walk)


def sweep_uids(uids: Collection[int], timeout_s: float = SWEEP_TIMEOUT_S,
               walk: Callable[[], dict[int, int]] | None = None) -> int:
    """`sweep_uid` for several uids at once: each walk of /proc serves them all."""
    wanted = set(uids)
    deadline = time.monotonic() + timeout_s
    killed: set[int] = set()
    pause = 0.0005
    while True:
        left = {pid: owner for pid, owner in (walk or live_processes)().items()
                if owner in wanted}
        if not left:
            return len(killed)
        if time.monotonic() > deadline:
            owners = " ".join(str(u) for u in sorted(set(left.values())))
            raise SandboxError(f"processes of sandbox uid {owners} survived SIGKILL: "
                               f"{sorted(left)}")
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


TREE_WALK_MAX = 256  # processes a CPU reading visits: a fork-and-exit chain is endless


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + sys) of `pid` and every live descendant, as the kernel counts
    them (nothing the processes say): each process's CPU clock, which keeps the time of its
    threads that have ended (a thread's own `schedstat` goes with it: summing live threads
    only let work done in a joined thread vanish), else its `stat` utime + stime; plus what
    children already reaped had used (`cutime` + `cstime`, clock ticks). A process the
    kernel reaped by itself (its parent ignored SIGCHLD) is not in it, nor are processes
    beyond the first TREE_WALK_MAX visited."""
    tick = os.sysconf("SC_CLK_TCK")
    total_ns, ticks = 0, 0
    pending, seen = [pid], set[int]()
    while pending and len(seen) < TREE_WALK_MAX:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
            ticks += int(fields[13]) + int(fields[14])  # cutime, cstime (fields 16, 17)
            try:  # ns, every thread it ever had (CPUCLOCK_SCHED of the whole process)
                total_ns += time.clock_gettime_ns(((~current) << 3) | 2)
            except OSError:
                ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile: its parent's cutime has it once reaped
        pending += children_of(current)
    return total_ns / 1e9 + ticks / tick


def children_of(pid: int) -> list[int]:
    """Direct children of `pid` (from /proc; empty when it is gone)."""
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                kids += [int(k) for k in handle.read().split()]
    except OSError:
        pass
    return kids


BINARY_READ_MAX = 16 * 1024 * 1024


def _bwrap_flags(bwrap: str) -> tuple[str, ...]:
    """Optional hardening this bubblewrap supports (nested user namespaces: 0.8+). Read in
    its binary, which holds the option's name as its parser compares it, so detection
    starts bubblewrap once, for the trial; only a binary without it is asked for --help."""
    try:
        with open(bwrap, "rb") as handle:
            if b"--disable-userns\0" in handle.read(BINARY_READ_MAX):
                return ("--disable-userns",)
    except OSError:
        pass
    try:
        text = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10,
                              check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return ("--disable-userns",) if "--disable-userns" in text else ()


def _trial(conf: Confinement) -> str | None:
    """Start the interpreter exactly as a candidate would be; None if it ran, else why not."""
    uid = allocate_uid(conf)
    folder = prepare_folder(conf, uid)
    try:
        start = launch(conf, uid, folder, 1,
                       ["-I", "-S", "-c", "import sys; open(sys.argv[1], 'w').write('pass')",
                        module_path(conf, folder, "trial.py")])
        try:
            done = subprocess.run(start.argv, cwd=start.cwd, env=start.env, capture_output=True,
                                  text=True, timeout=30, check=False, start_new_session=True)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{exc}"
        if uid is not None:
            sweep_uid(uid)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            return lines[-1] if lines else f"exit code {done.returncode}"
        return None
    finally:
        if folder is not None:
            remove_folder(folder)


@functools.cache
def detect() -> Confinement:
    """The strongest confinement that actually works here (tried once, then cached): the
    whole of it in one trial, or none when an earlier process proved it on this machine as
    it is now (benchrig.sandbox.proof); when the trial fails, the uid switch alone and then
    the namespaces, to say which part fell short."""
    interpreter = _interpreter()
    reasons: list[str] = []
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    setpriv = trusted.program("setpriv")
    bwrap = trusted.program("bwrap")
    if not root:
        reasons.append("not running as root: the candidate keeps your uid")
    elif setpriv is None:
        reasons.append("setpriv (util-linux) is missing from the system folders: the "
                       "candidate keeps root's uid")
    if bwrap is None:
        reasons.append("bubblewrap is not installed in the system folders (apt install "
                       "bubblewrap): no namespaces")
    elif not interpreter.startswith("/usr/"):
        reasons.append(f"{interpreter} is outside /usr, so bubblewrap cannot show it")
        bwrap = None
    conf = Confinement(
        interpreter=interpreter, namespaces=bwrap is not None,
        dedicated_uid=root and setpriv is not None, bwrap=bwrap, setpriv=setpriv,
        bwrap_flags=_bwrap_flags(bwrap) if bwrap else (), uid_block=uid_block(),
        reasons=tuple(reasons))
    if conf.level == FULL:
        key = proof.machine_key(interpreter, bwrap, setpriv, conf.bwrap_flags)
        if proof.proven(key):
            return conf  # tried by an earlier process on this very machine state
        if _trial(conf) is None:  # the usual case: one trial proves uid and namespaces
            proof.remember(key)
            return conf
    if conf.dedicated_uid and (why := _trial(conf.without_namespaces())) is not None:
        conf = conf.without_dedicated_uid(f"switching to a dedicated uid failed: {why}")
    if conf.namespaces and (why := _trial(conf)) is not None:
        conf = conf.without_namespaces(f"bubblewrap cannot create its namespaces here: {why}")
    return conf


@functools.cache
def hide_from_same_uid() -> bool:
    """Make BenchRig non-dumpable: its /proc/<pid>/environ and memory become root's.

    Only for a candidate that shares BenchRig's uid (degraded, not root): it could
    otherwise read BenchRig's environment (API keys) through /proc. The cost: no core
    dumps, and debuggers of the same user cannot attach.
    """
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def warning(conf: Confinement) -> str | None:
    """The one-time warning for anything short of full isolation."""
    if conf.level == FULL:
        return None
    return (f"sandbox isolation is {conf.level}: " + "; ".join(conf.reasons)
            + " (see docs/security.md for what still holds)")
