"""The one sanitizer for text from outside: safe to store (no lone surrogates, bounded size)
and safe to print (no control, escape, bidi or line-breaking characters).

Everything a candidate, an agent, a server, a model or a task file sends crosses into a
result, a report or the terminal through these functions and nowhere else.
"""

from __future__ import annotations

import re

# Fields of a result that hold outside text are bounded (the full answer is in the sidecar).
DEFAULT_CAP = 1 << 20  # characters kept of one stored string
PRINT_CAP = 2000  # characters of one printed or rendered string
NAME_CAP = 200  # an exception's type name, a finish_reason, a model's id
CUT_MARK = "… [{n} more characters cut]"

# Lone surrogates (U+D800–U+DFFF) cannot be written as UTF-8: escaped as `\udXXX` text.
_SURROGATE = re.compile("[\ud800-\udfff]")
# What must never reach a terminal or a rendered report: C0 controls (tab and newline
# included, so a line cannot be faked), DEL, C1 controls (U+009B is a CSI), bidi
# embeddings, overrides and isolates, line/paragraph separators, and byte-order marks.
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_VISIBLE = {"\n": "⏎", "\t": " ", "\r": "␍"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _VISIBLE:
        return _VISIBLE[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cap(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + CUT_MARK.format(n=len(text) - limit)


def stored(text: str, limit: int = DEFAULT_CAP) -> str:
    """`text` as a result or sidecar keeps it: lone surrogates escaped, at most `limit`
    characters (plus the cut mark). Control characters are kept: the file is data."""
    text = cap(text, limit)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # C speed; only a lone surrogate makes it fail
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text


def printable(text: str, limit: int = PRINT_CAP) -> str:
    """`text` as the terminal or a report shows it: one line, every unprintable character
    shown as an escape (`\\x9b`, `\\u202e`, `⏎` for a newline), at most `limit` characters."""
    text = stored(text, limit)
    for char, shown in _VISIBLE.items():  # the common ones at C speed
        if char in text:
            text = text.replace(char, shown)
    if text.isprintable():  # fast: false for every character _UNPRINTABLE names
        return text
    return _UNPRINTABLE.sub(_escape, text)


def printable_lines(text: str, limit: int = PRINT_CAP) -> str:
    """`text` as a report shows a block of it (an answer, a transcript): like `printable`,
    but its line breaks kept; at most `limit` characters in all."""
    text = cap(text, limit)
    if text.isascii() and text.replace("\n", "").isprintable():  # the usual case, at C speed
        return text
    return "\n".join(printable(line, len(text)) for line in text.split("\n"))


def type_name(exc: BaseException) -> str:
    """An exception's class name, bounded (a candidate can name a class 12 MB long)."""
    return printable(type(exc).__name__, NAME_CAP)


def label(value: object) -> str:
    """A name from a result (model, agent, task, suite, finish reason) as a table or report
    shows it: printable and short. Every renderer reads outside names through this."""
    return printable(str(value), NAME_CAP)
