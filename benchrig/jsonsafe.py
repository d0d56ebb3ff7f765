"""Numbers and structures from untrusted streams made fit for strict JSON and for arithmetic."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from benchrig.textsafe import stored

# Beyond 2**53 a count is no count (a float cannot even hold it exactly), and dividing a
# larger int by a float can overflow. JSON parses `1e400` as inf: not a number either.
LARGEST_COUNT = 2**53
MAX_DEPTH = 64  # raw server/agent objects nested deeper are not worth keeping
TOO_DEEP = "(nested deeper than BenchRig keeps)"
# What parsing or reading an untrusted JSON value can raise besides ValueError & co.:
# int(inf) → OverflowError, deeply nested text → RecursionError.
NUMERIC_ERRORS = (OverflowError, RecursionError)


def finite(value: Any) -> float | None:
    """A finite number as a float, or None: missing, not a number, bool, inf or NaN."""
    kind = type(value)  # the two exact types first: a summary asks this a million times
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        return float(value) if abs(value) <= LARGEST_COUNT else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) > LARGEST_COUNT:
        return None
    return float(value) if math.isfinite(value) else None


def whole(value: Any) -> int | None:
    """A count as an int (a float is truncated), or None when it is not a finite number
    from 0 to LARGEST_COUNT (a result holds no negative count)."""
    number = finite(value)
    if number is None or not 0 <= number <= LARGEST_COUNT:
        return None
    return value if isinstance(value, int) else int(number)


def json_safe(value: Any, depth: int = 0) -> Any:
    """`value` as strict JSON can hold it: non-finite floats → None, objects nested deeper
    than MAX_DEPTH → a short note (so writing it can never recurse too deep), every string
    and key through textsafe.stored (a lone surrogate can never make the UTF-8 write fail)."""
    if isinstance(value, str):
        return stored(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        return {stored(key) if isinstance(key, str) else key: json_safe(item, depth + 1)
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        return [json_safe(item, depth + 1) for item in value]
    return value
