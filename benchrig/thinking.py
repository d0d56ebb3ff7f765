"""Thinking vs answer (<think>…</think>), streamed or whole: the one parse shared by the
metrics, code extraction and answer checks, with the first time of each part."""

from __future__ import annotations

import re
from dataclasses import dataclass

OPEN, CLOSE = "<think>", "</think>"
# Tags in any ASCII case, as models and templates write them.
_TAG = {tag: re.compile(re.escape(tag), re.IGNORECASE | re.ASCII) for tag in (OPEN, CLOSE)}
_LONGEST_TAG = max(len(OPEN), len(CLOSE))


def _partial_tag_suffix(text: str, tags: tuple[str, ...]) -> int:
    """Length of the longest end of `text` that could be the start of one of `tags`."""
    if "<" not in text[-(_LONGEST_TAG - 1):]:  # the common case, checked without a loop
        return 0
    for size in range(min(_LONGEST_TAG - 1, len(text)), 0, -1):
        end = text[-size:].lower()
        if any(tag.startswith(end) for tag in tags):
            return size
    return 0


@dataclass(slots=True)
class _Piece:
    thinking: bool
    text: str
    t: float


class ThinkSplitter:
    """Feed content pieces as they arrive; tags may be split across pieces anywhere.

    Inside `<think>` everything up to the first `</think>` is thinking; an unclosed
    `<think>` makes the rest thinking. A stray `</think>` with no opening tag (R1-style
    templates put `<think>` in the prompt) means everything before it was thinking: answer
    text already seen becomes thinking, and the first answer token is the first answer
    text after it.
    """

    def __init__(self) -> None:
        self._pieces: list[_Piece] = []
        self._answer_pieces = 0
        self.first_any: float | None = None
        self.first_answer: float | None = None
        self.first_thinking: float | None = None
        self.in_think = False
        self._pending = ""

    def thinking_delta(self, text: str, now: float) -> None:
        """Reasoning that arrived in a separate field (reasoning_content, thinking, …)."""
        if text:
            self.first_any = self.first_any if self.first_any is not None else now
            self.first_thinking = self.first_thinking if self.first_thinking is not None else now
            self._pieces.append(_Piece(True, text, now))

    def feed(self, text: str, now: float) -> None:
        if not text:
            return
        if self.first_any is None:
            self.first_any = now
        if not self._pending and "<" not in text:  # no tag can start here: the common case
            self._emit(text, now)
            return
        text = self._pending + text
        self._pending = ""
        while text:
            tags = (CLOSE,) if self.in_think else (OPEN, CLOSE)
            found = [m for m in (_TAG[tag].search(text) for tag in tags) if m is not None]
            if found:
                match = min(found, key=lambda m: m.start())
                self._emit(text[:match.start()], now)
                if self.in_think:
                    self.in_think = False
                elif match.re is _TAG[OPEN]:
                    self.in_think = True
                else:
                    self._stray_close()
                text = text[match.end():]
                continue
            keep = _partial_tag_suffix(text, tags)
            self._emit(text[: len(text) - keep], now)
            self._pending = text[len(text) - keep:]
            break

    def _emit(self, text: str, now: float) -> None:
        if not text:
            return
        if self.in_think:
            self.thinking_delta(text, now)
            return
        if self.first_answer is None and text.strip():
            self.first_answer = now
        self._pieces.append(_Piece(False, text, now))
        self._answer_pieces += 1

    def _stray_close(self) -> None:
        """`</think>` outside thinking: the answer so far was thinking."""
        if not self._answer_pieces:
            return
        for piece in self._pieces:
            if not piece.thinking:
                piece.thinking = True
                if self.first_thinking is None or piece.t < self.first_thinking:
                    self.first_thinking = piece.t
        self._answer_pieces = 0
        self.first_answer = None

    def finish(self, now: float) -> None:
        """End of stream: a held-back partial tag was just text."""
        pending, self._pending = self._pending, ""
        self._emit(pending, now)

    @property
    def answer(self) -> str:
        return "".join(piece.text for piece in self._pieces if not piece.thinking)

    @property
    def thinking(self) -> str:
        return "".join(piece.text for piece in self._pieces if piece.thinking)

    @property
    def truncated_thinking(self) -> bool:
        """The stream ended inside <think>: there is no answer."""
        return self.in_think


def split_thinking(text: str) -> tuple[str, str, bool]:
    """A whole response → (thinking, answer, ended inside thinking), parsed exactly as a
    stream of it would be."""
    splitter = ThinkSplitter()
    splitter.feed(text, 0.0)
    splitter.finish(0.0)
    return splitter.thinking, splitter.answer, splitter.in_think
