"""A registered plugin's object: `module:attr` imported, a failure named for the user."""

from __future__ import annotations

import importlib
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.textsafe import printable, type_name


def load_target(kind: str, name: str, target: str) -> Any:
    """The object `target` (`module:attr`) names; a plugin that fails to import is the
    user's installation: a UsageError naming the kind, the name and the target."""
    module_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except Exception as exc:
        raise UsageError(f"{kind} {printable(name)!r}: loading {printable(target)} failed: "
                         f"{type_name(exc)}: {printable(str(exc))}") from exc
