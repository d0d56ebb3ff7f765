"""The context suite's scenario (steps, fill, needle) read from a task, and the needle prompt of
one step: filler cut to a token target, the needle on a sentence boundary at a depth (pure)."""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_STEPS = (512, 1024, 2048, 4096, 8192)
DEFAULT_FILL_RATIO = 0.75
DEFAULT_DEPTH = 0.5
DEFAULT_NEEDLE = "The secret access code is {code}."
DEFAULT_INSTRUCTION = ("What is the secret access code stated in the text above? Reply with "
                       "the number only.")
DEFAULT_EXPECTED = "{code}"
# Where a step's expected answer (the template, filled) reaches its check: task.check[...]
EXPECTED_KEY = "step_expected"
CHARS_PER_TOKEN = 4  # the specification's estimate where no tokenizer is reachable
CODE_LOW, CODE_HIGH = 100_000, 999_999  # six digits: never a year, never a small count
MAX_COUNTS = 12  # prompts counted per step while fitting the fill to its target
SENTENCE = re.compile(r"[^.!?]*[.!?]+(?=\s|$)|[^.!?]+$")
DIGIT = re.compile(r"\d")
SENTENCE_END = re.compile(r"[.!?](\s|$)")

# (messages) → their token count; what counted it; whether the count is the whole prompt
# as the engine sees it (chat template included) or only the messages' text.
Count = Callable[[list[dict[str, str]]], int]


@dataclass(frozen=True)
class TokenCounter:
    """How a step's prompt is measured while it is filled: `method` is recorded."""

    count: Count
    method: str  # "tokenizer" (the model's own), "server tokenizer", "estimate"
    detail: str  # what exactly was counted, for the result
    whole_prompt: bool
    # The tokens of each word of a text (each with its leading space), where one call can
    # say it cheaply (an in-process tokenizer): the fill then moves word by word between
    # two whole counts. None where the words do not split cleanly.
    word_tokens: Callable[[list[str]], list[int] | None] | None = None


def estimate_counter() -> TokenCounter:
    """The specification's estimate: about 4 characters per token, message text only."""

    def count(messages: list[dict[str, str]]) -> int:
        return -(-sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN)

    return TokenCounter(count, "estimate", f"{CHARS_PER_TOKEN} characters per token of the "
                        "message text (no tokenizer reachable)", False)


@dataclass(frozen=True)
class Scenario:
    """A context task's frontmatter, with the defaults filled in."""

    steps: tuple[int, ...]
    fill_ratio: float
    needle_depth: float
    needle: str
    instruction: str
    expected: str
    needle_seed: int | None
    filler: str

    @staticmethod
    def of(meta: Mapping[str, Any], body: str) -> Scenario:
        seed = meta.get("needle_seed")
        return Scenario(
            steps=tuple(int(s) for s in meta.get("steps", DEFAULT_STEPS)),
            fill_ratio=float(meta.get("fill_ratio", DEFAULT_FILL_RATIO)),
            needle_depth=float(meta.get("needle_depth", DEFAULT_DEPTH)),
            needle=str(meta.get("needle", DEFAULT_NEEDLE)),
            instruction=str(meta.get("instruction", DEFAULT_INSTRUCTION)),
            expected=str(meta.get("expected", DEFAULT_EXPECTED)),
            needle_seed=int(seed) if seed is not None else None,
            filler=" ".join(body.split()),
        )

    def seed_for(self, run_seed: int | None, fresh: int) -> int:
        """The attempt's needle seed: the scenario's `needle_seed` plus the run's seed (so
        `--seed` and run k reproduce it), else `fresh` (drawn anew, so no rerun repeats
        the codes a model could have seen)."""
        if self.needle_seed is None:
            return fresh
        return self.needle_seed + (run_seed or 0)


def scenario_problems(meta: Mapping[str, Any]) -> list[str]:
    """`field: what is wrong` with a context scenario's frontmatter (what the schema cannot
    see)."""
    problems = []
    steps = list(meta.get("steps", DEFAULT_STEPS))
    if len(set(steps)) != len(steps):
        problems.append("steps: each window may appear once")
    if steps != sorted(steps):
        problems.append("steps: list the windows from the smallest up (the spill point is "
                        "the first step that no longer fits)")
    for key, default in (("needle", DEFAULT_NEEDLE), ("expected", DEFAULT_EXPECTED)):
        if "{code}" not in str(meta.get(key, default)):
            problems.append(f"{key}: must contain {{code}} (where the step's code goes)")
    needle = str(meta.get("needle", DEFAULT_NEEDLE))
    if not re.search(r"[.!?]$", needle.strip()):
        problems.append("needle: must be one sentence ending in . ! or ?")
    for key, default in (("needle", DEFAULT_NEEDLE), ("instruction", DEFAULT_INSTRUCTION),
                         ("expected", DEFAULT_EXPECTED)):
        text = str(meta.get(key, default)).replace("{code}", "")
        if key != "expected" and DIGIT.search(text):
            problems.append(f"{key}: no digits outside {{code}} (any number there could be "
                            "taken for the code)")
        if "{" in text or "}" in text:
            problems.append(f"{key}: the only placeholder is {{code}}")
    return problems


def filler_problems(body: str) -> list[str]:
    """What is wrong with a context scenario's filler (its Markdown body)."""
    problems = []
    if DIGIT.search(body):
        problems.append("body: the filler may hold no digits (a number there could be taken "
                        "for the code, or hide it)")
    if len(body.split()) < 20 or not SENTENCE_END.search(body):
        problems.append("body: the filler needs at least 20 words and a sentence end "
                        "(. ! ?), where the needle goes")
    return problems


def draw_codes(seed: int, count: int) -> tuple[int, ...]:
    """`count` distinct six-digit codes from `seed`: one per step, reproducible."""
    return tuple(random.Random(seed).sample(range(CODE_LOW, CODE_HIGH + 1), count))


@dataclass(frozen=True)
class Filler:
    """The filler as a stream of words that repeats forever, with its sentence ends."""

    words: tuple[str, ...]
    ends: tuple[int, ...]  # word counts at which a sentence of one cycle ends
    offsets: tuple[int, ...]  # characters before word i of a cycle (single spaces)

    @staticmethod
    @functools.cache
    def of(text: str) -> Filler:
        words: list[str] = []
        ends: list[int] = []
        for sentence in SENTENCE.findall(" ".join(text.split())):
            words.extend(sentence.split())
            ends.append(len(words))
        offsets = [0]
        for word in words:
            offsets.append(offsets[-1] + len(word) + 1)
        return Filler(tuple(words), tuple(ends), tuple(offsets))

    def take(self, n: int) -> list[str]:
        cycle = len(self.words)
        return list(self.words) * (n // cycle) + list(self.words[: n % cycle])

    def chars_before(self, k: int) -> int:
        """Characters before word k of the stream (each word followed by one space)."""
        cycle = len(self.words)
        return (k // cycle) * self.offsets[-1] + self.offsets[k % cycle]

    def boundaries(self, n: int) -> list[int]:
        """Word counts ≤ n where a sentence ends (0, the start, included)."""
        cycle = len(self.words)
        found = [0]
        for start in range(0, n, cycle):
            found.extend(start + e for e in self.ends if start + e <= n)
        return found


@dataclass(frozen=True)
class NeedlePrompt:
    """One step's prompt and how it was fitted."""

    text: str
    target_tokens: int
    counted_tokens: int
    counts: int  # how many times the prompt was counted while fitting it
    filler_words: int
    needle_chars_before: int  # characters of the document before the needle
    document_chars: int
    depth: float  # where the needle sits: characters before it ÷ the document's characters


def _document(filler: Filler, n: int, needle: str, depth: float) -> tuple[str, int]:
    """The first n filler words with the needle after the sentence end nearest `depth`
    (measured in characters): (document, characters before the needle)."""
    total = max(filler.chars_before(n) - 1, 0)
    goal = depth * total
    cut = min(filler.boundaries(n),
              key=lambda b: (abs(max(filler.chars_before(b) - 1, 0) - goal), b))
    words = filler.take(n)
    before, after = " ".join(words[:cut]), " ".join(words[cut:])
    document = " ".join(part for part in (before, needle, after) if part)
    return document, len(before) + (1 if before else 0)


def build_prompt(scenario: Scenario, window: int, code: int,
                 counter: TokenCounter) -> NeedlePrompt:
    """The step's prompt: `fill_ratio` × `window` tokens as `counter` counts them, the
    filler cut at a word, the needle at `needle_depth` on a sentence boundary, then the
    instruction. The largest fill not over the target (exact where words allow)."""
    filler = Filler.of(scenario.filler)
    needle = scenario.needle.replace("{code}", str(code))
    target = max(1, round(scenario.fill_ratio * window))
    counts = 0

    def measure(n: int) -> tuple[int, str, int]:
        nonlocal counts
        counts += 1
        document, before = _document(filler, n, needle, scenario.needle_depth)
        text = f"{document}\n\n{scenario.instruction}"
        return counter.count([{"role": "user", "content": text}]), text, before

    base = measure(0)
    best = (0, base[0], base[1])  # the most words found not to overshoot the target
    cycle = len(filler.words)
    words = (counter.word_tokens(list(filler.words)) or []) if counter.word_tokens else []
    per_word = (max(sum(words) / cycle, 0.05) if words
                else max((measure(cycle)[0] - base[0]) / cycle, 0.05))
    high: int | None = None  # the fewest words found to overshoot
    if words and sum(words):  # the tokens add up word by word: start at the prediction
        full, rest = divmod(max(target - base[0], 0), sum(words))
        n = full * cycle
        for tokens_of_word in words:
            if tokens_of_word > rest:
                break
            rest, n = rest - tokens_of_word, n + 1
    else:
        n = round((target - base[0]) / per_word)
    n = max(n, 1)
    while base[0] < target and counts < MAX_COUNTS:
        tokens, text, _ = measure(n)
        if tokens <= target:
            best = max(best, (n, tokens, text))
            if tokens == target:
                break
        else:
            high = n if high is None else min(high, n)
        if high is not None and high - best[0] <= 1:
            break
        moved = n
        if words:  # word by word: tokens add up across words (the tokenizer splits at spaces)
            guess = tokens
            while guess < target and guess + words[moved % cycle] <= target:
                guess, moved = guess + words[moved % cycle], moved + 1
            while guess > target and moved > 0:
                moved -= 1
                guess -= words[moved % cycle]
            if moved == n and tokens <= target:
                break  # the next word would overshoot: this is the closest fill
            if moved == n:
                words = []  # the words do not add up here: step as without them
        if moved == n:
            moved = n + (round((target - tokens) / per_word) or (1 if tokens < target else -1))
        n = max(moved, best[0] + 1)
        if high is not None:
            n = min(n, high - 1)
    n, tokens, text = best
    document, before = _document(filler, n, needle, scenario.needle_depth)
    chars = len(document) - len(needle) - (1 if len(document) > len(needle) else 0)
    return NeedlePrompt(text, target, tokens, counts, n, before, len(document),
                        round(before / chars, 4) if chars > 0 else 0.0)
