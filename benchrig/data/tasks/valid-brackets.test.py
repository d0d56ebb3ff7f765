"""Acceptance tests for valid-brackets: 6 checks."""

from solution import is_valid


def test_simple_pairs():
    assert is_valid("()") is True
    assert is_valid("()[]{}") is True


def test_nested_pairs():
    assert is_valid("{[()]}") is True
    assert is_valid("([]{()})") is True


def test_mismatched_kinds_and_order():
    assert is_valid("(]") is False
    assert is_valid("([)]") is False


def test_unclosed_and_unopened():
    assert is_valid("((") is False
    assert is_valid("())") is False
    assert is_valid("]") is False


def test_empty_string():
    assert is_valid("") is True


def test_other_characters_are_ignored():
    assert is_valid("a(b)c") is True
    assert is_valid("x{y[z)w]}") is False
