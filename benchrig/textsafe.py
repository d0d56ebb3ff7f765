"""The one sanitizer for text from outside: safe to store (no lone surrogates, bounded size)
and safe to print (no control, escape, bidi, line-breaking or other format characters).

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
# included, so a line cannot be faked), DEL, C1 controls (U+009B is a CSI), line/paragraph
# separators, and every format character (Unicode category Cf, plus the code points its
# blocks keep for more): bidi marks, embeddings, overrides and isolates, zero-width space
# and joiners, word joiner and invisible operators, soft hyphen, byte-order mark, and the
# tag characters that spell hidden ASCII (U+E0000–U+E007F). Each would make two different
# names look alike or hide text; tests/report checks this list against unicodedata.
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f]")
_VISIBLE = {"\n": "⏎", "\t": " ", "\r": "␍"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _VISIBLE:
        return _VISIBLE[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"  # as Python writes it


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
    """`text` as the terminal or a report shows it: one line, every control and format
    character shown as an escape (`\\x9b`, `\\u202e`, `\\u200b`, `⏎` for a newline), at
    most `limit` characters."""
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
