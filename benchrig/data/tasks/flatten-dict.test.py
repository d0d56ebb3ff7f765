"""Acceptance tests for flatten-dict: 4 checks."""

from solution import flatten_dict


def test_flat_input_is_unchanged():
    assert flatten_dict({"a": 1, "b": "two", "c": None}) == {"a": 1, "b": "two", "c": None}


def test_nested_keys_are_joined_at_any_depth():
    data = {"a": {"b": 1, "c": {"d": 2, "e": {"f": 3}}}, "g": 4}
    assert flatten_dict(data) == {"a.b": 1, "a.c.d": 2, "a.c.e.f": 3, "g": 4}


def test_custom_separator():
    data = {"x": {"y": {"z": 0}}, "w": {"v": [1, 2]}}
    assert flatten_dict(data, sep="/") == {"x/y/z": 0, "w/v": [1, 2]}
    assert flatten_dict(data, "__") == {"x__y__z": 0, "w__v": [1, 2]}


def test_empty_dicts_and_non_dict_values():
    assert flatten_dict({}) == {}
    data = {"a": {}, "b": [1, {"c": 2}], "d": {"e": {}}, "f": 1.5}
    assert flatten_dict(data) == {"b": [1, {"c": 2}], "f": 1.5}
