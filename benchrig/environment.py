"""The machine an attempt ran on: OS, Python, CPU, RAM, GPU (read once per process)."""

from __future__ import annotations

import os
import platform
import subprocess
from functools import cache
from typing import Any

from benchrig import trusted


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_gb() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _gpu() -> str | None:
    smi = trusted.program("nvidia-smi")
    if smi is None:
        return None
    try:
        query = [smi, "--query-gpu=name,memory.total", "--format=csv,noheader"]
        out = subprocess.run(query, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return "; ".join(names) or None


def os_name() -> str:
    """What platform.platform() says, without the `uname -p` it starts on Linux (3–18 ms):
    the processor that would add is the machine again or "unknown", and it drops both."""
    name = os.uname()
    if name.sysname != "Linux":
        return platform.platform()
    libc, version = platform.libc_ver()
    text = "-".join(part.strip() for part in
                    (name.sysname, name.release, name.machine, "with", libc + version) if part)
    for char, shown in ((" ", "_"), ("/", "-"), ("\\", "-"), (":", "-"), (";", "-"),
                        ('"', "-"), ("(", "-"), (")", "-"), ("unknown", "")):
        text = text.replace(char, shown)
    while "--" in text:
        text = text.replace("--", "-")
    return text.rstrip("-")


@cache
def machine() -> dict[str, Any]:
    return {
        "os": os_name(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_gb": _ram_gb(),
        "gpu": _gpu(),
    }


def load_avg() -> dict[str, float] | None:
    """The load average now (1, 5, 15 minutes), or None where the OS has none: a speed
    figure taken on a busy machine is slower than the model (not cached: it moves)."""
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):
        return None
    return {"1m": round(one, 2), "5m": round(five, 2), "15m": round(fifteen, 2)}


def environment(runtime: dict[str, Any]) -> dict[str, Any]:
    """The environment block of a result: this machine, its load, and the runtime that
    answered."""
    return {**machine(), "load_avg": load_avg(),
            "runtime": {"name": "unknown", "version": None, **runtime}}
