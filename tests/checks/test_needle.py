"""The context suite's needle: the checker matches the step's code only as a whole number after
the thinking, and the prompt builder puts the needle on a sentence boundary at the requested
depth, filled to its token target."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchrig.checks.needle import EXPECTED_KEY, check_needle, found
from benchrig.core.errors import TaskError
from benchrig.core.settings import Settings
from benchrig.core.transcript import Transcript
from benchrig.haystack import (
    Scenario,
    TokenCounter,
    build_prompt,
    draw_codes,
    estimate_counter,
)
from benchrig.spec import load_task
from tests.conftest import TASKS

TASK = load_task(TASKS / "context-needle.md")
SCENARIO = Scenario.of(TASK.frontmatter, TASK.body)
codes = st.integers(100_000, 999_999)


def judged(answer: str, code: int, thinking: str = "") -> bool:
    from dataclasses import replace
    from types import MappingProxyType

    task = replace(TASK, check=MappingProxyType({**TASK.check, EXPECTED_KEY: str(code)}))
    verdict = check_needle(task, Transcript(answer=answer, thinking=thinking), Settings())
    return verdict.result == "pass"


@given(codes)
def test_the_code_alone_or_in_a_sentence_passes(code: int) -> None:
    for answer in (f"{code}", f"The secret access code is {code}.", f"**{code}**",
                   f"Code: `{code}`", f"{code:,}", f"<think>hmm</think>{code}"):
        assert judged(answer, code), answer


@given(codes, st.integers(0, 9), st.sampled_from(["prefix", "suffix"]))
def test_the_code_inside_a_longer_number_fails(code: int, digit: int, where: str) -> None:
    longer = f"{digit}{code}" if where == "prefix" else f"{code}{digit}"
    if int(longer) == code:  # a leading 0 leaves the same number: not a longer one
        return
    assert not judged(f"The code is {longer}.", code)
    assert not judged(f"The code is {code}.{digit}5", code)  # a decimal is another number


@given(codes, st.integers(1, 99_999))
def test_a_near_miss_fails(code: int, delta: int) -> None:
    assert not judged(f"The secret access code is {code + delta}.", code)
    assert not judged(f"The secret access code is {code - delta}.", code)


@given(codes)
def test_the_code_only_in_the_thinking_fails(code: int) -> None:
    assert not judged("I do not know the code.", code, thinking=f"It said {code}.")
    assert not judged(f"<think>the code is {code}</think>I cannot tell.", code)
    assert not judged(f"<think>the code is {code}", code)  # cut off while thinking


def test_a_template_with_text_matches_it_whole() -> None:
    assert found("#123456", "the code is #123456.")
    assert not found("#123456", "the code is #1234567.")
    assert not found("#123456", "the code is 123456.")


def test_codes_are_reproducible_from_the_seed_and_distinct() -> None:
    assert draw_codes(7, 5) == draw_codes(7, 5)
    assert len(set(draw_codes(7, 5))) == 5
    assert draw_codes(7, 5) != draw_codes(8, 5)
    fixed = Scenario.of({**TASK.frontmatter, "needle_seed": 100}, TASK.body)
    assert fixed.seed_for(3, fresh=999) == 103  # the scenario's seed plus the run's
    assert SCENARIO.seed_for(3, fresh=999) == 999  # none: drawn anew, recorded


def pieces(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def words_counter(by_word: bool = False) -> TokenCounter:
    """A tokenizer stand-in: one token per word and per punctuation mark; `by_word`: it also
    says what each word takes, as the embedded model's tokenizer does."""

    def count(messages: list[dict[str, str]]) -> int:
        return sum(pieces(m["content"]) for m in messages)

    def word_tokens(words: list[str]) -> list[int]:
        return [pieces(w) for w in words]

    return TokenCounter(count, "tokenizer", "words", True, word_tokens if by_word else None)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 1.0), st.floats(0.0, 1.0), st.sampled_from([512, 1024, 2048, 8192]),
       codes, st.sampled_from(["words", "by word", "estimate"]))
def test_the_needle_sits_on_a_sentence_boundary_at_the_depth(
        fill: float, depth: float, window: int, code: int, counting: str) -> None:
    scenario = Scenario.of({**TASK.frontmatter, "fill_ratio": fill, "needle_depth": depth},
                           TASK.body)
    counter = (estimate_counter() if counting == "estimate"
               else words_counter(by_word=counting == "by word"))
    prompt = build_prompt(scenario, window, code, counter)
    needle = scenario.needle.replace("{code}", str(code))
    document = prompt.text.rsplit("\n\n", 1)[0]
    at = prompt.needle_chars_before
    assert document[at:at + len(needle)] == needle
    assert document.count(str(code)) == 1
    head = document[:at].rstrip()
    assert head == "" or head[-1] in ".!?"  # after a whole sentence, never inside one
    # the nearest boundary: no further than one sentence of the filler from the depth
    longest = max(len(s) for s in re.findall(r"[^.!?]*[.!?]", scenario.filler)) + 1
    filler_chars = len(document) - len(needle) - 1
    if filler_chars > 0:
        assert abs(prompt.depth - depth) * filler_chars <= longest
    # filled to the target: never over it, and short of it by less than one word
    assert prompt.counted_tokens <= prompt.target_tokens or prompt.filler_words == 0
    assert counter.count([{"role": "user", "content": prompt.text}]) == prompt.counted_tokens
    if prompt.filler_words:
        assert prompt.target_tokens - prompt.counted_tokens <= 3


@pytest.mark.parametrize("by_word", [False, True])
def test_the_fill_hits_the_target_exactly_where_words_allow(by_word: bool) -> None:
    for window in (512, 1024, 2048, 4096, 8192):
        prompt = build_prompt(SCENARIO, window, 123456, words_counter(by_word))
        assert prompt.target_tokens == round(0.75 * window)
        assert prompt.counted_tokens in (prompt.target_tokens, prompt.target_tokens - 1)
        # knowing each word's tokens, one whole count (after the empty prompt's) suffices
        assert prompt.counts <= (2 if by_word else 12)


@pytest.mark.parametrize(("change", "problem"), [
    ({"steps": [1024, 512]}, "steps: list the windows from the smallest up"),
    ({"steps": [512, 512]}, "steps: each window may appear once"),
    ({"needle": "The code is secret."}, "needle: must contain {code}"),
    ({"needle": "Code {code} in room 12."}, "needle: no digits outside {code}"),
    ({"instruction": "Give the {answer}."}, "instruction: the only placeholder is {code}"),
    ({"fill_ratio": 1.5}, "fill_ratio"),
])
def test_a_broken_scenario_is_refused_at_load(tmp_path: Path, change: dict[str, object],
                                              problem: str) -> None:
    import yaml

    meta = {**TASK.frontmatter, **change}
    path = tmp_path / "context-needle.md"
    path.write_text(f"---\n{yaml.safe_dump(meta)}---\n\n{TASK.body}\n", encoding="utf-8")
    with pytest.raises(TaskError) as caught:
        load_task(path)
    assert any(problem in p for p in caught.value.problems), caught.value.problems


def test_a_filler_with_digits_is_refused(tmp_path: Path) -> None:
    text = (TASKS / "context-needle.md").read_text(encoding="utf-8")
    path = tmp_path / "context-needle.md"
    path.write_text(text.replace("The old harbour", "In 1890 the old harbour"),
                    encoding="utf-8")
    with pytest.raises(TaskError, match="body: the filler may hold no digits"):
        load_task(path)


@given(codes, st.integers(1, 99_999), st.sampled_from([
    "{a} or {b}", "The code is {a} or {b}.", "Either {b} or {a}.", "{a} (or maybe {b})",
    "{a}, {b}", "It is {a}. It might also be {b}.", "Candidates: {a} and {b}.",
    "{b}? {a}?"]))
def test_an_answer_offering_another_code_fails(code: int, delta: int, style: str) -> None:
    other = code + delta if code + delta <= 999_999 else code - delta
    assert not judged(style.format(a=code, b=other), code)


@given(codes, st.integers(1, 99_999))
def test_another_code_rejected_or_other_numbers_beside_the_code_pass(code: int,
                                                                     delta: int) -> None:
    other = code + delta if code + delta <= 999_999 else code - delta
    for answer in (f"The code is {code}, not {other}.", f"The code in the 4096-token text is "
                   f"{code}.", f"{code} (section 3, line 12)", f"Code: {code:,}"):
        assert judged(answer, code), answer


def test_the_alternatives_named_in_the_issue_fail() -> None:
    assert not judged("482913 or 482931", 482913)
    assert judged("482913", 482913)
