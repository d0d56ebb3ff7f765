"""The one thinking parse: streamed in any pieces or whole, it agrees with itself and with the
rules the checks used before (kept below as the reference), and a stray `</think>` (R1-style
templates open `<think>` in the prompt) makes what came before it thinking, in the metrics too."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from benchrig.checks.normalize import final_text
from benchrig.resultio.files import validate
from benchrig.thinking import ThinkSplitter, split_thinking
from tests.conftest import cli_call
from tests.helpers.loopback import Loopback, Reply, sse
from tests.helpers.openai import GOOD, USAGE, chunk

# The regular expressions extract.py and normalize.py used, as the reference for ASCII text.
_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN_TO_END = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)


def reference(text: str) -> tuple[str, bool]:
    answer = _OPEN_TO_END.sub("", _BLOCK.sub("", text))
    if "</think>" in answer.lower():
        answer = answer[answer.lower().rindex("</think>") + len("</think>"):]
    lowered = text.lower()
    return answer, lowered.rfind("<think>") > lowered.rfind("</think>")


TAGS = ["<think>", "</think>", "<THINK>", "</Think>"]
TEXT = ["a", " b ", "\n", "x<y", "think", "é"]
# Pieces of tags too. The old regexes glued the text around a removed block together, so
# `<thi<think>…</think>nk>` grew a new tag; the reference holds only where no tag can form.
FRAGMENTS = ["<thi", "nk>", "</", "<", ">"]


def random_texts(count: int, seed: int = 7, words: list[str] = TAGS + TEXT) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(words) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def streamed(text: str, rng: random.Random) -> ThinkSplitter:
    splitter = ThinkSplitter()
    pos = 0
    while pos < len(text):
        size = rng.randint(1, 6)
        splitter.feed(text[pos:pos + size], float(pos))
        pos += size
    splitter.finish(float(len(text)))
    return splitter


# Written by hand: (text, thinking, answer, ended inside a trace).
SPLITS = [
    ("", "", "", False),
    ("no tags at all", "", "no tags at all", False),
    ("<think>plan</think>42", "plan", "42", False),
    ("<THINK>plan</Think>\n42", "plan", "\n42", False),  # tags in any ASCII case
    ("<think>still thinking", "still thinking", "", True),
    ("plan</think>42", "plan", "42", False),  # a stray close: what came before was thinking
    ("a<think>b</think>c<think>d", "bd", "ac", True),
    ("x<think>y</think>z</think>w", "xyz", "w", False),
    ("x<y</think", "", "x<y</think", False),  # half a tag is text
    ("<think></think>", "", "", False),
]


def checked(answer: str, thinking: str = "") -> tuple[str, bool]:
    found = final_text(answer, thinking)
    return found.text, found.ended_in_thinking


def test_whole_text_agrees_with_the_rules_the_checks_used() -> None:
    """Both entry points (the split and the checks' `final_text`) against expectations that do
    not come from them: the cases above, and the old regular expressions on random text."""
    for text, thinking, answer, ended in SPLITS:
        assert split_thinking(text) == (thinking, answer, ended), text
        assert checked(text) == (answer, ended), text
    for text in random_texts(5000):
        assert split_thinking(text)[1:] == reference(text), text
        assert checked(text) == reference(text), text
    # a separate reasoning field with no answer after it also ended inside the trace
    assert checked("", "trace") == ("", True)
    assert checked(" \n", "trace") == (" \n", True)
    assert checked("42", "trace") == ("42", False)


def test_any_pieces_give_the_same_split_as_the_whole_text() -> None:
    rng = random.Random(11)
    for text in random_texts(3000, seed=3, words=TAGS + TEXT + FRAGMENTS):
        splitter = streamed(text, rng)
        assert (splitter.thinking, splitter.answer, splitter.in_think) == split_thinking(text)


def test_a_stray_close_moves_the_answer_so_far_to_thinking_with_its_times() -> None:
    splitter = ThinkSplitter()
    splitter.feed("Let me", 1.0)
    splitter.feed(" check.</th", 2.0)
    assert (splitter.first_answer, splitter.answer) == (1.0, "Let me check.")
    splitter.feed("ink>\n", 3.0)
    assert (splitter.first_answer, splitter.first_thinking) == (None, 1.0)
    splitter.feed("42", 4.0)
    splitter.finish(5.0)
    assert (splitter.thinking, splitter.answer) == ("Let me check.", "\n42")
    assert (splitter.first_any, splitter.first_thinking, splitter.first_answer) == (1.0, 1.0, 4.0)
    assert not splitter.truncated_thinking


def test_separate_reasoning_then_a_stray_close_in_the_content() -> None:
    splitter = ThinkSplitter()
    splitter.thinking_delta("plan", 1.0)
    splitter.feed("more plan</think>", 2.0)
    splitter.feed("done", 3.0)
    assert (splitter.thinking, splitter.answer) == ("planmore plan", "done")
    assert (splitter.first_thinking, splitter.first_answer) == (1.0, 3.0)


def test_a_stray_close_and_nothing_after_is_an_answer_ended_in_thinking() -> None:
    assert split_thinking("all reasoning</think>") == ("all reasoning", "", False)
    # the checks' rule for a trace with nothing after it, inline or in its own field
    assert final_text("", "all reasoning").ended_in_thinking


@pytest.mark.slow
def test_r1_style_stream_through_the_openai_driver(results_dir: Path) -> None:
    reasoning = "An OrderedDict keeps recency in O(1)."
    reply = Reply((*sse(chunk({"content": reasoning[:10]}), chunk({"content": reasoning[10:]})),
                   *sse(chunk({"content": "</think>\n\n"}), chunk({"content": GOOD}),
                        chunk({}, "stop"), chunk(None, usage=USAGE), "[DONE]")),
                  content_type="text/event-stream", pause_s=0.1)
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       results_dir=results_dir)
    (path,) = results_dir.glob("*.json")
    result = json.loads(path.read_text())
    validate(result)
    assert ran.code == 0 and result["result"] == "pass", result["notes"]
    m = result["metrics"]
    assert m["thinking_chars"] == len(reasoning)
    # three pieces of thinking paced 0.1 s apart were sent before the answer's first word, so
    # it came at least 0.3 s into the request, and after the first piece of thinking: pieces
    # read at once share one stamp (docs/security.md, "Lines read at once share one stamp"),
    # which here takes a reader starved for 0.3 s; no gap between the stamps is asserted
    assert m["answer_ttft_ms"] >= 300 and m["answer_ttft_ms"] > m["ttft_ms"] > 0
    assert m["think_time_s"] == pytest.approx((m["answer_ttft_ms"] - m["ttft_ms"]) / 1000)
    assert m["thinking_tokens"] > 0 and m["thinking_tokens_source"] == "estimated"
    assert reasoning not in result["answer_excerpt"] and "</think>" not in result["answer_excerpt"]
    answer = json.loads((results_dir / result["transcript_file"]).read_text().splitlines()[1])
    assert (answer["thinking"], answer["text"]) == (reasoning, "\n\n" + GOOD)
