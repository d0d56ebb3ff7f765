"""The sandbox boundary's encoding: plain values keep their types; anything else is refused."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchrig.sandbox.codec import BoundaryError, decode, encode

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() \
    | st.binary()
hashables = st.recursive(scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner),
                         max_leaves=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.sets(hashables)
    | st.dictionaries(hashables, inner),
    max_leaves=20,
)


def roundtrip(value: object) -> object:
    return decode(json.loads(json.dumps(encode(value), allow_nan=False)))


@pytest.mark.slow
@given(values)
def test_roundtrip_keeps_value_and_type(value: object) -> None:
    back = roundtrip(value)
    assert back == value
    assert type(back) is type(value)


def test_tuple_stays_tuple_and_dict_keys_keep_types() -> None:
    value = {(1, 2): [1, (2,)], 3: frozenset({"a"}), "k": {b"x"}}
    back = roundtrip(value)
    assert back == value
    assert isinstance(next(iter(back)), tuple)  # type: ignore[call-overload]


def test_non_finite_floats() -> None:
    back = roundtrip([math.inf, -math.inf, math.nan])
    assert isinstance(back, list)
    assert back[0] == math.inf and back[1] == -math.inf and math.isnan(back[2])


def test_live_objects_cannot_cross() -> None:
    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True

    for value in (AlwaysEqual(), [AlwaysEqual()], (x for x in ()), print, {1: object()}):
        with pytest.raises(BoundaryError):
            encode(value)


def test_subclasses_become_their_plain_base() -> None:
    class Sneaky(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    back = roundtrip(Sneaky(3))
    assert type(back) is int and back == 3 and back != 4


@pytest.mark.parametrize("message", [
    {"$tuple": [1], "extra": 2}, {"$unknown": 1}, {"a": 1}, {"$set": [[1]]},
    {"$dict": [[[1], 2]]}, {"$dict": [[1]]}, {"$bytes": "!!"}, {"$float": "huge"},
    {"$handle": 1}, 1.5e400,
])
def test_malformed_messages_are_refused(message: object) -> None:
    with pytest.raises(BoundaryError):
        decode(message)


COLLIDING = [k * ((1 << 61) - 1) for k in range(1, 150_001)]  # every one hashes to 0


@pytest.mark.parametrize("flood", [COLLIDING, tuple(COLLIDING), [(k,) for k in COLLIDING[:200]],
                                   [[k] for k in COLLIDING[:100]] + COLLIDING[:100],
                                   [[k, 0] for k in COLLIDING[:200]],
                                   {str(n): k for n, k in enumerate(COLLIDING[:200])}],
                         ids=["list", "tuple", "tuples-in-a-list", "mixed-with-unhashable",
                              "pairs-for-dict()", "dict-values"])
def test_a_list_or_tuple_flooding_one_hash_is_refused(flood: object) -> None:
    # MBPP/2's own test calls set() on the answer in BenchRig's process: quadratic there,
    # in one C call no deadline can interrupt. Refused at the boundary, as a set would be.
    with pytest.raises(BoundaryError, match="share one hash"):
        roundtrip(flood)


def test_repeated_values_sharing_a_hash_still_cross() -> None:
    # equal values are no flood (hash(-1) == hash(-2) too): plain answers keep crossing
    for value in ([0] * 10_000, [-1, -2] * 5_000, tuple([1.0, 1, True] * 1000),
                  [(1, 2)] * 1000, COLLIDING[:64] * 10, [[10**30, 1]] * 1000,
                  [10**20 + n for n in range(10_000)], [[2**64 + n] for n in range(1000)]):
        assert roundtrip(value) == value
