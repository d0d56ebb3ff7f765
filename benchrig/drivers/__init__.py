"""Drivers by name: built-ins load lazily; plugins use the `benchrig.drivers` entry point.

Public: this lookup and `benchrig.drivers.base` (the contract). The driver modules here are
private to BenchRig: a plugin driver does not import them."""

from __future__ import annotations

from benchrig.core.errors import UsageError
from benchrig.core.plugins import load_target
from benchrig.drivers.base import Driver
from benchrig.textsafe import printable, type_name

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
        raise UsageError(f"unknown driver {printable(name)!r}; known drivers: "
                         f"{', '.join(map(printable, known()))}")
    found = load_target("driver", name, target)
    if not isinstance(found, type):
        raise UsageError(f"driver {printable(name)!r}: {printable(target)} is not a driver "
                         "class (implement benchrig.drivers.base.Driver)")
    try:
        driver = found()
    except Exception as exc:  # the plugin's own code: the user's installation, named
        raise UsageError(f"driver {printable(name)!r}: starting {printable(target)} failed: "
                         f"{type_name(exc)}: {printable(str(exc))}") from exc
    if not callable(getattr(driver, "run", None)):
        raise UsageError(f"driver {printable(name)!r}: {printable(target)} is not a driver "
                         "(it has no run method: implement benchrig.drivers.base.Driver)")
    checked: Driver = driver
    return checked
