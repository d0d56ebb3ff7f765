"""Drivers by name: built-ins load lazily; plugins use the `benchrig.drivers` entry point.

Public: this lookup and `benchrig.drivers.base` (the contract). The driver modules here are
private to BenchRig: a plugin driver does not import them."""

from __future__ import annotations

import importlib

from benchrig.core.errors import UsageError
from benchrig.drivers.base import Driver

__all__ = ["BUILTIN", "get_driver", "known"]

BUILTIN = {
    "aider": "benchrig.drivers.aider:AiderDriver",
    "claude": "benchrig.drivers.claude:ClaudeDriver",
    "codex": "benchrig.drivers.codex:CodexDriver",
    "gemini": "benchrig.drivers.gemini:GeminiDriver",
    "llamacpp": "benchrig.drivers.llamacpp:LlamaCppDriver",
    "miniswe": "benchrig.drivers.miniswe:MiniSweDriver",
    "ollama": "benchrig.drivers.ollama:OllamaDriver",
    "openai": "benchrig.drivers.openai:OpenAIDriver",
    "opencode": "benchrig.drivers.opencode:OpencodeDriver",
    "pi": "benchrig.drivers.pi:PiDriver",
    "qwen": "benchrig.drivers.qwen:QwenDriver",
    "replay": "benchrig.drivers.replay:ReplayDriver",
}


def _targets() -> dict[str, str]:
    from importlib.metadata import entry_points  # scanning the installed packages: only here

    targets = dict(BUILTIN)
    for point in entry_points(group="benchrig.drivers"):
        targets.setdefault(point.name, point.value)
    return targets


def known() -> list[str]:
    return sorted(_targets())


def get_driver(name: str) -> Driver:
    """The driver registered as `name`; its heavy dependencies load only when it runs."""
    target = BUILTIN.get(name) or _targets().get(name)  # a plugin never shadows a built-in
    if target is None:
        raise UsageError(f"unknown driver {name!r}; known drivers: {', '.join(known())}")
    module_name, _, attr = target.partition(":")
    driver: Driver = getattr(importlib.import_module(module_name), attr)()
    return driver
