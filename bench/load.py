"""A busy machine on demand: N processes spinning on the CPU while a benchmark runs.

    with busy(8):   # load average ~8 above what was there
        ...

Each loop is a process of its own (`python -c "while True: pass"`), started at entry and
killed at exit by its own pid, so the load is the same whichever benchmark asks for it.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

SPIN = "while True: pass"


@contextlib.contextmanager
def busy(loops: int) -> Iterator[None]:
    """`loops` busy processes for the duration of the block (none for 0)."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(loops)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()
