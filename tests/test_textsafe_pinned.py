"""textsafe pinned through its public functions: exact cuts at each cap, exact escapes for
each class of unprintable character, stored text kept as data, names bounded."""

from __future__ import annotations

import pytest

from benchrig.textsafe import (
    CUT_MARK,
    DEFAULT_CAP,
    NAME_CAP,
    PRINT_CAP,
    cap,
    label,
    printable,
    printable_lines,
    stored,
    type_name,
)


def test_the_caps_are_what_the_docs_say() -> None:
    assert (DEFAULT_CAP, PRINT_CAP, NAME_CAP) == (1_048_576, 2000, 200)


def test_cap_keeps_text_up_to_the_limit_and_says_how_much_it_cut() -> None:
    assert cap("abcde", 5) == "abcde"
    assert cap("abcdef", 5) == "abcde… [1 more characters cut]"
    assert cap("x" * 30, 10) == "x" * 10 + CUT_MARK.format(n=20)
    assert cap("", 0) == ""


@pytest.mark.parametrize("limit", [None, 3])
def test_stored_cuts_at_its_cap(limit: int | None) -> None:
    size = DEFAULT_CAP if limit is None else limit
    def keep(text: str) -> str:
        return stored(text) if limit is None else stored(text, limit)
    assert keep("a" * size) == "a" * size
    assert keep("a" * (size + 2)) == "a" * size + "… [2 more characters cut]"
    assert keep("é" * (size + 1)) == "é" * size + "… [1 more characters cut]"


def test_stored_escapes_lone_surrogates_and_keeps_everything_else() -> None:
    assert stored("ok \ud800 and \udfff") == "ok \\ud800 and \\udfff"
    # the file is data: controls, newlines, bidi overrides and other scripts stay
    kept = "line\nnext\t\x1b[2J\x9b\u202e zażółć 日本"
    assert stored(kept) == kept
    assert stored("plain ascii") == "plain ascii"
    assert stored("ab\ud83d", 2) == "ab… [1 more characters cut]"  # cut before escaping


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\nb", "a⏎b"),
    ("a\tb", "a b"),
    ("a\rb", "a␍b"),
    ("\x00", "\\x00"),
    ("\x07bell", "\\x07bell"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x1f", "\\x1f"),
    ("\x7f", "\\x7f"),
    ("\x80", "\\x80"),
    ("\x9b31m", "\\x9b31m"),
    ("\x9f", "\\x9f"),
    ("\u061c", "\\u061c"),
    ("\u200e\u200f", "\\u200e\\u200f"),
    ("\u2028\u2029", "\\u2028\\u2029"),
    ("\u202a\u202e", "\\u202a\\u202e"),
    ("\u2066\u2069", "\\u2066\\u2069"),
    ("\ufeff", "\\ufeff"),
    ("\ud800", "\\ud800"),
    ("é ÿ Ā 日本 ✓", "é ÿ Ā 日本 ✓"),
    ("", ""),
])
def test_printable_shows_each_unprintable_class_as_an_escape(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_printable_is_one_line_whatever_the_input() -> None:
    forged = "fail\n\x9b2K\x1b[1Gtask: pass (3/3 checks)\u202e\r\n"
    shown = printable(forged)
    assert shown == "fail⏎\\x9b2K\\x1b[1Gtask: pass (3/3 checks)\\u202e␍⏎"
    assert shown.isprintable()


def test_printable_cuts_at_its_cap_before_escaping() -> None:
    assert printable("a" * PRINT_CAP) == "a" * PRINT_CAP
    assert printable("a" * (PRINT_CAP + 5)) == "a" * PRINT_CAP + "… [5 more characters cut]"
    assert printable("\x1b" * 4, 2) == "\\x1b\\x1b… [2 more characters cut]"
    assert printable("a\nb", 10) == "a⏎b"


def test_printable_lines_keeps_line_breaks_and_escapes_the_rest() -> None:
    assert printable_lines("def f():\n    return 1\n") == "def f():\n    return 1\n"
    assert printable_lines("a\tb\nc\x1b[2J") == "a b\nc\\x1b[2J"
    assert printable_lines("ok\x1b") == "ok\\x1b"  # ASCII, but not printable
    assert printable_lines("zażółć\n\u202eevil\r") == "zażółć\n\\u202eevil␍"
    assert printable_lines("é\n\ud800") == "é\n\\ud800"


def test_printable_lines_cuts_the_whole_block_not_each_line() -> None:
    block = "\n".join(["x" * 50] * 100)
    assert printable_lines(block) == block[:PRINT_CAP] + CUT_MARK.format(
        n=len(block) - PRINT_CAP)
    assert printable_lines("abc\ndef", 5) == "abc\nd… [2 more characters cut]"
    long_line = "é" * 3000
    assert printable_lines(long_line, 3000) == long_line  # no line is cut by its own cap


def test_type_name_is_bounded_and_printable() -> None:
    assert type_name(ValueError("x")) == "ValueError"
    huge = type("B" * 1000, (ValueError,), {})
    assert type_name(huge()) == "B" * NAME_CAP + CUT_MARK.format(n=1000 - NAME_CAP)
    odd = type("Bad\x1b[2J\nName", (Exception,), {})
    assert type_name(odd()) == "Bad\\x1b[2J⏎Name"


def test_label_shows_any_value_short_and_printable() -> None:
    assert label("smollm2") == "smollm2"
    assert label(42) == "42" and label(None) == "None"
    assert label("m" * NAME_CAP) == "m" * NAME_CAP
    assert label("m" * (NAME_CAP + 1)) == "m" * NAME_CAP + "… [1 more characters cut]"
    assert label("model\n\u202e") == "model⏎\\u202e"
