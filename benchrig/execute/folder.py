"""The results folder held by a run: what a killed run left half-written is removed first,
when no other run is writing there."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = ".benchrig.lock"
SIDECAR = ".transcript.jsonl"


@contextmanager
def held(results_dir: Path) -> Iterator[list[Path]]:
    """Hold `results_dir` for a run (a shared lock: runs may write side by side); when no
    other run holds it, first remove the leftovers of a killed run (`leftovers`). Yields the
    files removed. The lock ends with the process, however it ends."""
    results_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(results_dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        removed: list[Path] = []
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another run is writing here: its files are not leftovers
            pass
        else:
            removed = [path for path in leftovers(results_dir) if _removed(path)]
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield removed
    finally:
        os.close(fd)


def leftovers(results_dir: Path) -> list[Path]:
    """Files only a killed run leaves: a temporary file of an atomic write, and a transcript
    whose result was never written (the transcript is written first)."""
    found = sorted(results_dir.glob(".*.json.*.tmp")) + \
        sorted(results_dir.glob(f".*{SIDECAR}.*.tmp"))
    found += [sidecar for sidecar in sorted(results_dir.glob(f"*{SIDECAR}"))
              if not sidecar.with_name(sidecar.name.removesuffix(SIDECAR) + ".json").exists()]
    return found


def _removed(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
