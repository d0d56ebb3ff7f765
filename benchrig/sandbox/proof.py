"""A full confinement proven on this machine, remembered so that a fresh process need not try it.

`confinement.detect()` proves full isolation by starting a trial sandbox (~20–90 ms, most of
a short run's detection). Once it worked, the fact is written under ~/.cache/benchrig, keyed
by everything the trial depended on that can be read without starting a process: BenchRig's
detection code, the effective uid, the kernel and this boot, the helpers and the interpreter
(path and stat), the namespace limits, the process's own namespaces, capabilities, seccomp
state and uid map. Any change and the next process tries again.

Only success is remembered, never a shortfall: a file that says less than the truth could
otherwise downgrade a run. A file that says more than the truth cannot make a result claim
isolation it lacks, because every sandbox proves its own confinement before any candidate
code runs (its hello: its own uid, pid 1–3 of a pid namespace; bubblewrap refuses to start
at all without every namespace it was asked for). A sandbox that fails to start forgets the
proof (`forget`), so the process after it tries again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path

FORMAT = 1
KEPT = 8  # keys remembered (a home shared by several machines or containers)
# Limits that decide whether namespaces can be made, changeable without a reboot.
KNOBS = ("/proc/sys/user/max_user_namespaces", "/proc/sys/user/max_pid_namespaces",
         "/proc/sys/user/max_net_namespaces", "/proc/sys/user/max_ipc_namespaces",
         "/proc/sys/user/max_uts_namespaces", "/proc/sys/user/max_mnt_namespaces",
         "/proc/sys/user/max_cgroup_namespaces", "/proc/sys/kernel/unprivileged_userns_clone",
         "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
         "/proc/sys/kernel/random/boot_id", "/proc/self/uid_map", "/proc/self/gid_map",
         "/proc/self/setgroups")
STATUS_LINES = (b"CapEff:", b"CapBnd:", b"CapPrm:", b"NoNewPrivs:", b"Seccomp:")
SOURCES = ("confinement.py", "process.py", "proof.py")  # the detection and its proof


def cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "benchrig" / "isolation.json"


def _read(path: str, size: int = 4096) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(size).decode("utf-8", "replace")
    except OSError as exc:
        return f"! {exc.errno}"


def _stat(path: str | None) -> list[object]:
    if path is None:
        return [None]
    try:
        info = os.stat(path)
    except OSError as exc:
        return [path, exc.errno]
    return [path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
            info.st_mode, info.st_uid, info.st_gid]


def machine_key(interpreter: str, bwrap: str | None, setpriv: str | None,
                flags: tuple[str, ...]) -> str:
    """What a full confinement's trial depended on, as one digest."""
    here = Path(__file__).parent
    code = hashlib.sha256()
    for name in SOURCES:
        code.update((here / name).read_bytes())
    status = [line for line in _read("/proc/self/status", 1 << 16).encode().splitlines()
              if line.startswith(STATUS_LINES)]
    namespaces = []
    for kind in ("user", "pid", "mnt", "net", "ipc", "uts", "cgroup"):
        try:
            namespaces.append(os.readlink(f"/proc/self/ns/{kind}"))
        except OSError as exc:
            namespaces.append(f"! {exc.errno}")
    parts = [FORMAT, code.hexdigest(), os.geteuid(), os.getegid(), list(os.uname()),
             _stat(interpreter), _stat(os.path.realpath(interpreter)), _stat(bwrap),
             _stat(setpriv), list(flags), [_read(path) for path in KNOBS],
             [line.decode() for line in status], namespaces]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def _owned(info: os.stat_result) -> bool:
    """Ours and writable by no one else."""
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _kept() -> list[str]:
    path = cache_file()
    try:
        if not _owned(os.stat(path.parent)):
            return []
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return []
    try:
        with os.fdopen(fd, "rb") as handle:
            if not _owned(os.fstat(handle.fileno())):
                return []
            data = json.loads(handle.read(64 * 1024))
    except (OSError, ValueError):
        return []
    keys = data.get("full") if type(data) is dict and data.get("format") == FORMAT else None
    return [k for k in keys if type(k) is str] if type(keys) is list else []


def proven(key: str) -> bool:
    """Whether full confinement was proven here under `key`."""
    return key in _kept()


def remember(key: str) -> None:
    """Write down that full confinement works under `key` (silently not, if it cannot)."""
    path = cache_file()
    keys = [key, *(k for k in _kept() if k != key)][:KEPT]
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _owned(os.stat(path.parent)):
            return
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"format": FORMAT, "full": keys}, handle)
        os.replace(temporary, path)
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def forget() -> None:
    """Drop every proof: the next process tries the real thing again."""
    with contextlib.suppress(OSError):
        os.unlink(cache_file())
