"""The machine block of a result is read without starting a process where none is needed."""

from __future__ import annotations

import platform
import subprocess

import pytest

from benchrig import environment


def test_the_os_is_named_as_platform_names_it_without_running_uname(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # platform.platform() runs `uname -p` (3–18 ms) for a processor it then drops on Linux
    expected = platform.platform()

    def no_process(*args: object, **options: object) -> None:
        raise AssertionError(f"started a process: {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    assert environment.os_name() == expected
