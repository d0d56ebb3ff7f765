"""Plain values ↔ tagged JSON for the sandbox boundary; types survive, live objects cannot.

Standard library only: this file is also sent, as source, into the sandbox.

    None, bool, int, str, finite float   → themselves
    list                                 → [...]
    tuple / set / frozenset              → {"$tuple": […]} / {"$set": […]} / {"$frozenset": […]}
    dict (any hashable keys)             → {"$dict": [[key, value], ...]}
    bytes                                → {"$bytes": "<base64>"}
    nan / inf / -inf                     → {"$float": "nan" | "inf" | "-inf"}
    a candidate object (args only)       → {"$handle": n}
"""

from __future__ import annotations

import binascii
import math
import sys

TYPE_CHECKING = False  # no `typing` import at run time: the sandbox starts faster without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_DEPTH = 64
# Distinct plain keys rarely share a hash, but ints do on purpose (hash(k * (2**61 - 1))
# is 0 for every k): a set of them would make building it quadratic in the parent.
MAX_SAME_HASH = 64
# Two different ints share a hash only if they differ by a multiple of this (or are -1 and
# -2): only ints at least this large can pile up on one hash.
_HASH_MODULUS = sys.hash_info.modulus
_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_CONTAINER_TAGS = {"$tuple": tuple, "$set": set, "$frozenset": frozenset}


class BoundaryError(Exception):
    """A value that is not plain data, or a message that is not well formed."""


def encode(value: Any, depth: int = 0, handle_of: Callable[[Any], int | None] | None = None) -> Any:
    """A JSON-ready form of `value`; subclasses of the plain types become their base type."""
    if depth > MAX_DEPTH:
        raise BoundaryError("value is nested too deeply to cross the sandbox boundary")
    if value is None or value is True or value is False:
        return value
    if handle_of is not None:
        handle = handle_of(value)
        if handle is not None:
            return {"$handle": handle}
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        number = float(value)
        if math.isfinite(number):
            return number
        return {"$float": "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")}
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return {"$bytes": binascii.b2a_base64(bytes(value), newline=False).decode("ascii")}
    nxt = depth + 1
    if isinstance(value, dict):
        return {"$dict": [[encode(k, nxt, handle_of), encode(v, nxt, handle_of)]
                          for k, v in value.items()]}
    if isinstance(value, list):
        return [encode(v, nxt, handle_of) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, nxt, handle_of) for v in value]}
    if isinstance(value, frozenset):
        return {"$frozenset": [encode(v, nxt, handle_of) for v in value]}
    if isinstance(value, set):
        return {"$set": [encode(v, nxt, handle_of) for v in value]}
    raise BoundaryError(
        f"a value of type {type(value).__name__} cannot cross the sandbox boundary "
        "(only plain data: None, bool, int, float, str, bytes, list, tuple, set, dict)"
    )


def _refuse_hash_flooding(items: list[Any], where: str = "one collection") -> None:
    """Refuse a collection whose distinct members pile up on one hash: a set or dict built
    from them would be quadratic in the judge, whether the codec builds it (set, dict) or
    the test does (`set(result)` of a list or tuple). Distinct members only: `[0] * 1000`
    or `[-1, -2] * 500` (hash(-1) == hash(-2)) are plain answers. Unhashable members are
    skipped. Linear: one hash and at most MAX_SAME_HASH comparisons per member."""
    from collections import Counter  # here: most sandboxes never decode a long list

    try:  # the usual case, at C speed: no hash is shared by that many members at all
        if max(Counter(map(hash, items)).values()) <= MAX_SAME_HASH:
            return
    except TypeError:  # an unhashable member: counted one by one below
        pass
    buckets: dict[int, list[Any]] = {}
    for item in items:
        try:
            digest = hash(item)
        except TypeError:
            continue
        seen = buckets.get(digest)
        if seen is None:
            buckets[digest] = [item]
        elif item not in seen:
            seen.append(item)
            if len(seen) > MAX_SAME_HASH:
                raise BoundaryError(f"more than {MAX_SAME_HASH} distinct values in {where} "
                                    "share one hash: refused, it would stall the judge")


def decode(data: Any, depth: int = 0, resolve: Callable[[int], Any] | None = None) -> Any:
    """The plain value `data` stands for; anything not exactly of the tagged form is refused.

    Hash floods are refused wherever the test could build a set or dict from the values:
    in one collection (a set, a dict's keys, a list or tuple the test calls `set()` on),
    and among all the large ints of the value, however nested (the test's own
    `dict(pairs)` or `set(map(tuple, rows))` hashes members of inner lists)."""
    big: list[int] = []
    value = _decode(data, depth, resolve, big)
    if len(big) > MAX_SAME_HASH:
        _refuse_hash_flooding(big, "one reply")
    return value


def _decode(data: Any, depth: int, resolve: Callable[[int], Any] | None,
            big: list[int]) -> Any:
    if depth > MAX_DEPTH:
        raise BoundaryError("message is nested too deeply")
    kind = type(data)
    if kind is int:
        if data >= _HASH_MODULUS or data <= -_HASH_MODULUS:
            big.append(data)
        return data
    if data is None or kind is bool or kind is str:
        return data
    if kind is float:
        if not math.isfinite(data):
            raise BoundaryError("a bare non-finite float is not a valid message")
        return data
    nxt = depth + 1
    if kind is list:
        items = [_decode(v, nxt, resolve, big) for v in data]
        if len(items) > MAX_SAME_HASH:  # fewer cannot hold MAX_SAME_HASH + 1 colliding values
            _refuse_hash_flooding(items)
        return items
    if kind is not dict or len(data) != 1:
        raise BoundaryError(f"malformed value in message: {type(data).__name__}")
    (tag, payload), = data.items()
    try:
        if tag in _CONTAINER_TAGS and type(payload) is list:
            items = [_decode(v, nxt, resolve, big) for v in payload]
            if len(items) > MAX_SAME_HASH:
                _refuse_hash_flooding(items)
            return _CONTAINER_TAGS[tag](items)
        if tag == "$dict" and type(payload) is list:
            pairs = [_decode(p, nxt, resolve, big) for p in payload]
            if not all(type(p) is list and len(p) == 2 for p in pairs):
                raise BoundaryError("malformed $dict entry")
            if len(pairs) > MAX_SAME_HASH:
                _refuse_hash_flooding([k for k, _ in pairs])
            return {k: v for k, v in pairs}
        if tag == "$bytes" and type(payload) is str:
            return binascii.a2b_base64(payload.encode("ascii"), strict_mode=True)
        if tag == "$float" and payload in _FLOATS:
            return _FLOATS[payload]
        if tag == "$handle" and type(payload) is int and resolve is not None:
            return resolve(payload)
    except (TypeError, ValueError, binascii.Error) as exc:  # unhashable key, bad base64
        raise BoundaryError(f"malformed {tag} in message: {exc}") from None
    raise BoundaryError(f"malformed value in message: unknown tag {tag!r}")
