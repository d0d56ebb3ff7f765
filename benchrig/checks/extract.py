"""Finds the code in a model's answer: past <think>, out of fences, away from the prose."""

from __future__ import annotations

import ast
import bisect
import re
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from benchrig.thinking import split_thinking

FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+.#-]*)[^\n]*\n", re.MULTILINE)
CODE_LANGS = {"", "python", "py", "python3", "py3"}
CODE_START = re.compile(r"^(def |class |import |from |async def |@)")


@dataclass(frozen=True)
class Extraction:
    code: str | None
    truncated: bool
    how: str  # fenced | unclosed-fence | bare | none


def _indent(text: str) -> int:
    return len(text.expandtabs(4)) - len(text.expandtabs(4).lstrip(" "))


# A line that ends in a fence character (then spaces or tabs): a fence may close there.
CLOSING_END = re.compile(r"[`~][ \t]*$", re.MULTILINE)
Closing = tuple[int, int, bool]  # (body end, fence end, whether it closes by the rules)


class _Lines:
    """Every line of `text` that ends in a run of ``` ` ``` or `~`, found in one pass:
    (line start, run start, run length, line end), in order, per character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.by_char: dict[str, list[tuple[int, int, int, int]]] = {"`": [], "~": []}
        for match in CLOSING_END.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            line = text[start:match.end()].rstrip(" \t")
            char = line[-1]
            body = line.rstrip(char)
            self.by_char[char].append((start, start + len(body), len(line) - len(body),
                                       match.end()))
        self.starts = {char: [line[0] for line in lines]
                       for char, lines in self.by_char.items()}

    def closings(self, opening: re.Match[str]) -> Iterator[Closing]:
        """Where the fence opened by `opening` may close, in order: (body end, fence end,
        whether it is a closing fence by the rules).

        A fence alone on its line closes when it is indented at most 3 columns more than
        the opening one (CommonMark); one indented deeper (a ``` inside a docstring, say)
        does not, but stays a last resort. Some models glue the closing fence to the last
        line of code: that counts too. A run of at least the opening's length closes it.
        """
        marker = opening.group(1)
        limit = _indent(self.text[opening.start():opening.start(1)]) + 3
        lines = self.by_char[marker[0]]
        first = bisect.bisect_left(self.starts[marker[0]], opening.end())
        for index in range(first, len(lines)):
            start, run_start, run, end = lines[index]
            if run < len(marker):
                continue
            lead = self.text[start:run_start]
            if lead.strip():  # glued to a line of code
                yield run_start, end, True
            else:
                yield start, end, _indent(lead) <= limit


def _body(text: str) -> str:
    return textwrap.dedent(text).rstrip() + "\n"


def _blocks(text: str) -> tuple[list[tuple[str, str]], str | None]:
    """Complete fenced blocks as (language, body), and the body of a final unclosed fence.

    Bodies are dedented (a block inside a Markdown list item is indented as a whole). A
    Python body that does not parse runs on to the next fence that makes it parse. Every
    line that may close a fence is found once, so the cost grows with the text, not with
    the number of fences times the text.
    """
    blocks: list[tuple[str, str]] = []
    lines = _Lines(text)
    pos = 0
    while match := FENCE.search(text, pos):
        lang = match.group(2).lower()
        chosen = next(((end, after) for end, after, rule in lines.closings(match) if rule),
                      None)
        body = _body(text[match.end():chosen[0]]) if chosen else ""
        if lang in CODE_LANGS and (chosen is None or not _parses(body)):
            for end, after, _ in lines.closings(match):
                if chosen is not None and end <= chosen[0]:
                    continue
                candidate = _body(text[match.end():end])
                if _parses(candidate):
                    chosen, body = (end, after), candidate
                    break
        if chosen is None:
            return blocks, _body(text[match.end():]) if lang in CODE_LANGS else None
        blocks.append((lang, body))
        pos = chosen[1]
    return blocks, None


_PARSING = threading.Lock()


def parse(source: str) -> ast.Module:
    """ast.parse, one thread at a time: CPython 3.11 counts the depth of the AST objects it
    builds per interpreter, and parses in several threads at once (verify's attempts) raised
    "SystemError: AST constructor recursion depth mismatch" (seen once in ~8,000)."""
    with _PARSING:
        return ast.parse(source)


def _parses(code: str) -> bool:
    """Whether `code` is a Python module. The model wrote it: nesting past the parser's depth
    (`x = ------…-1`) raises RecursionError or MemoryError, which means "not code" too."""
    try:
        parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _defines(code: str, names: tuple[str, ...]) -> bool:
    return any(re.search(rf"^\s*(def|class)\s+{re.escape(n)}\b|^{re.escape(n)}\s*=", code,
                         re.MULTILINE) for n in names)


def _bare_code(text: str) -> str | None:
    """Code written without fences: from the first code-looking line, dropping prose tails."""
    if _parses(text) and any(CODE_START.match(line) for line in text.splitlines()):
        return text
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if CODE_START.match(line)), None)
    if start is None:
        return None
    for end in range(len(lines), start, -1):
        candidate = "\n".join(lines[start:end]).rstrip()
        if candidate and _parses(candidate):
            return candidate + "\n"
    return None


def extract_code(text: str, entry_points: tuple[str, ...] = (),
                 hit_token_limit: bool = False) -> Extraction:
    """The Python module in `text`, preferring a complete fenced block that defines the entry
    point; `truncated` when the answer stopped at the token limit before the code was whole."""
    _, answer, _ = split_thinking(text)  # the code of the answer, never of the thinking
    blocks, unclosed = _blocks(answer)
    python = [body for lang, body in blocks if lang in CODE_LANGS]
    defining = [body for body in python if _defines(body, entry_points)] if entry_points else []
    if defining:
        return Extraction(defining[-1], False, "fenced")
    if unclosed is not None:
        if hit_token_limit:
            return Extraction(None, True, "none")
        if _parses(unclosed) or not python:
            return Extraction(unclosed, False, "unclosed-fence")
    if python:
        return Extraction(max(python, key=len), False, "fenced")
    if blocks:  # fenced, but in some other language: leave it to the tests to fail
        return Extraction(max((b for _, b in blocks), key=len), False, "fenced")
    bare = _bare_code(answer)
    if bare is not None and (not hit_token_limit or _defines(bare, entry_points)):
        return Extraction(bare, False, "bare")
    return Extraction(None, hit_token_limit, "none")


def truncation_message(max_tokens: int | None) -> str:
    return f"Response truncated at num_predict={max_tokens} before the code was complete"
