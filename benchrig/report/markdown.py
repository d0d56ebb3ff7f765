"""Markdown from outside words: every table row and name escaped, BenchRig's own markup marked."""

from __future__ import annotations

import re
from collections.abc import Iterable

# What Markdown would read as markup in outside words: a `|` ends a table cell (a task id
# holding one adds cells), `\` escapes the next character, `` ` `` opens code, `*` emphasis,
# `<` `>` HTML or an autolink, `&` a character reference (`&#x202e;` is a bidi override once
# rendered), and `](` or `][` makes the text before it a link or an image. Each is shown as
# itself behind a backslash. (`_` and `~` are left: inside a word they do nothing, and at
# worst they emphasise or strike a name; the `[…]` of an interval stays as BenchRig writes it.)
_MARKUP = re.compile(r"([\\|`*<>&]|\](?=[(\[]))")


class Md(str):
    """Markdown BenchRig wrote itself (`**composite**`): put in a row as it is."""


def text(value: str) -> str:
    """`value` as Markdown shows it literally; `Md` as it is. `value` is already printable
    (textsafe): this only takes away its meaning as markup."""
    if isinstance(value, Md):
        return str(value)
    return _MARKUP.sub(r"\\\1", value)


def row(cells: Iterable[str]) -> str:
    """One table row, every cell through `text`: the only way a renderer writes a row, so a
    cell cannot add cells or markup of its own."""
    return "| " + " | ".join(text(c) for c in cells) + " |"


def header(names: Iterable[str]) -> list[str]:
    """A table's head: the names as a row, then the divider."""
    names = list(names)
    return [row(names), "|" + "---|" * len(names)]
