"""Splits streamed text into thinking and answer (<think>…</think>), timing the first of each."""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


def _partial_tag_suffix(text: str, tag: str) -> int:
    """Length of the longest end of `text` that could be the start of `tag`."""
    if "<" not in text[-(len(tag) - 1):]:  # the common case, checked without a loop
        return 0
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkSplitter:
    """Feed content pieces as they arrive; tags may be split across pieces anywhere."""

    def __init__(self) -> None:
        self.answer_parts: list[str] = []
        self.thinking_parts: list[str] = []
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
            self.thinking_parts.append(text)

    def feed(self, text: str, now: float) -> None:
        if not text:
            return
        if self.first_any is None:
            self.first_any = now
        text = self._pending + text
        self._pending = ""
        while text:
            tag = CLOSE if self.in_think else OPEN
            index = text.find(tag)
            if index >= 0:
                self._emit(text[:index], now)
                self.in_think = not self.in_think
                text = text[index + len(tag):]
                continue
            keep = _partial_tag_suffix(text, tag)
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
        self.answer_parts.append(text)

    def finish(self, now: float) -> None:
        """End of stream: a held-back partial tag was just text."""
        pending, self._pending = self._pending, ""
        self._emit(pending, now)

    @property
    def answer(self) -> str:
        return "".join(self.answer_parts)

    @property
    def thinking(self) -> str:
        return "".join(self.thinking_parts)

    @property
    def truncated_thinking(self) -> bool:
        """The stream ended inside <think>: there is no answer."""
        return self.in_think
