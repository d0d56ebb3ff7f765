"""What Claude Code and Codex need before a `local` attempt: the embedded model (or a script)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from benchrig.core.errors import UsageError
from benchrig.gateway.scripted import SCHEME


def preflight_local(agent: str, model: str) -> None:
    """`script:<file>` needs the file; any other model llama-cpp-python and the model file."""
    if model.startswith(SCHEME):
        if not Path(model[len(SCHEME):]).is_file():
            raise UsageError(f"scripted model: {model[len(SCHEME):]} is not a file")
        return
    from benchrig.local.model import INSTALL_HINT, resolve_model

    if importlib.util.find_spec("llama_cpp") is None:
        raise UsageError(f"{agent} with provider local needs llama-cpp-python: {INSTALL_HINT}")
    resolve_model(model)
