"""The llama_cpp.Llama objects still alive in this process, and who holds each."""

from __future__ import annotations

import gc
import sys
from typing import Any


def alive_llamas() -> list[str]:
    """Every Llama still alive (after a collection), named by what holds it; [] when
    llama_cpp was never imported, so none can exist."""
    llama_cpp = sys.modules.get("llama_cpp")
    if llama_cpp is None:
        return []
    gc.collect()
    return [_holders(o) for o in gc.get_objects() if isinstance(o, llama_cpp.Llama)]


def end_process_owners() -> None:
    """Close what owns a model for the whole process, as its atexit does (the llamacpp
    driver's loaded model, the shared gateways), for those this process imported."""
    driver = sys.modules.get("benchrig.drivers.llamacpp")
    if driver is not None:
        driver.unload()
    gateway = sys.modules.get("benchrig.gateway")
    if gateway is not None:
        gateway.close_all()


def _holders(llm: Any) -> str:
    """The module globals that hold `llm`, directly or in a container they name."""
    named: list[str] = []
    for referrer in gc.get_referrers(llm):
        for module in list(sys.modules.values()):
            space = getattr(module, "__dict__", None)
            if space is referrer:
                named.extend(f"{module.__name__}.{k}" for k, v in space.items() if v is llm)
            elif isinstance(space, dict):
                named.extend(f"{module.__name__}.{k}" for k, v in list(space.items())
                             if v is referrer)
    return f"a Llama held by {', '.join(named) or 'no module global'}"
