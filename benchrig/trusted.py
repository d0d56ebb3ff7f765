"""Helper programs BenchRig runs (bwrap, setpriv, kill, nvidia-smi), found only where no agent
or other user can plant one: fixed system folders, owned by root or by BenchRig's own user."""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

# Searched in this order; never the user's PATH, which may hold folders an agent (or another
# user) can write, such as ~/.local/bin.
SYSTEM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def _homes() -> list[str]:
    found = {os.path.realpath(os.path.expanduser("~"))}
    if os.environ.get("HOME"):
        found.add(os.path.realpath(os.environ["HOME"]))
    return [h for h in found if h != "/"]


def _safe_owner(info: os.stat_result) -> bool:
    """Owned by root or by us, and writable by no one else (a group write only for root's
    group)."""
    if info.st_uid not in (0, os.geteuid()):
        return False
    if info.st_mode & stat.S_IWOTH:
        return False
    return not (info.st_mode & stat.S_IWGRP and info.st_gid != 0)


def untrusted_because(path: str) -> str | None:
    """None if `path` (followed to its real file) and every folder above it can be changed
    only by root or BenchRig's user and lie outside the home; else why not."""
    real = os.path.realpath(path)
    for home in _homes():
        if real == home or real.startswith(home.rstrip("/") + "/"):
            return f"{real} is under the home folder {home}"
    try:
        info = os.stat(real)
    except OSError as exc:
        return f"{real}: {exc.strerror}"
    if not stat.S_ISREG(info.st_mode) or not os.access(real, os.X_OK):
        return f"{real} is not an executable file"
    for node in (Path(real), *Path(real).parents):
        try:
            node_info = os.stat(node)
        except OSError as exc:
            return f"{node}: {exc.strerror}"
        if not _safe_owner(node_info):
            return f"{node} can be changed by a user other than root or uid {os.geteuid()}"
    return None


@functools.cache
def program(name: str) -> str | None:
    """The absolute path of `name` in the first system folder holding a trusted copy, or None;
    resolved once per process."""
    for folder in SYSTEM_FOLDERS:
        candidate = os.path.join(folder, name)
        if os.path.lexists(candidate) and untrusted_because(candidate) is None:
            return candidate
    return None
