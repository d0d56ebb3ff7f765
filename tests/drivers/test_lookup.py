"""The drivers lookup as a broken or hostile plugin meets it: every failure is the user's
installation, named as a UsageError (never a traceback), as the checks and suites lookups do."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest

from benchrig.core.errors import UsageError
from benchrig.drivers import get_driver, known


class _Point:
    def __init__(self, name: str, value: str) -> None:
        self.name, self.value = name, value


def _plugins(monkeypatch: pytest.MonkeyPatch, **targets: str) -> None:
    def entry_points(group: str) -> list[Any]:
        return [_Point(name, value) for name, value in targets.items()] \
            if group == "benchrig.drivers" else []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


class NotADriver:
    """A class without `run`: what an entry point pointing at the wrong name gives."""


class Raises:
    def __init__(self) -> None:
        raise RuntimeError("plugin broke\x1b[2J while starting")


def test_a_plugin_driver_that_fails_to_import_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _plugins(monkeypatch, gone="no_such_module_here\x1b[31m:Driver")
    assert "gone" in known()
    with pytest.raises(UsageError, match=r"driver 'gone': loading no_such_module_here.*failed") \
            as caught:
        get_driver("gone")
    assert "\x1b" not in str(caught.value)  # the plugin's text is printed safely


def test_a_plugin_driver_that_is_no_driver_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _plugins(monkeypatch, wrong=f"{__name__}:NotADriver", broken=f"{__name__}:Raises",
             value=f"{__name__}:__doc__")
    with pytest.raises(UsageError, match=r"driver 'wrong': .* is not a driver"):
        get_driver("wrong")
    with pytest.raises(UsageError, match=r"driver 'value': .* is not a driver"):
        get_driver("value")
    with pytest.raises(UsageError, match=r"driver 'broken': starting .* failed: RuntimeError") \
            as caught:
        get_driver("broken")
    assert "\x1b" not in str(caught.value)

