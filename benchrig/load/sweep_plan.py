"""A load task and the command line → the prompts and the levels of a sweep."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.core.task import TaskSpec
from benchrig.load.engine import Level

DEFAULT_CONCURRENCY = (1, 2, 4, 8)
DEFAULT_REQUESTS = 16  # per level, when neither the task nor the command line bounds it
DEFAULT_WARMUP = 2
DEFAULT_PROMPT_COUNT = 64
SATURATION_START = 1
SATURATION_MAX = 1024
# Common English words that most tokenizers keep as one token with their leading space:
# a synthetic prompt of N words is about N tokens (recorded as estimated; the server's own
# prompt_tokens is recorded beside it).
WORDS = (
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but",
    "have", "an", "they", "you", "were", "her", "she", "there", "been", "one", "all",
    "we", "their", "has", "would", "when", "if", "so", "no", "will", "more", "out", "up",
    "into", "do", "any", "your", "what", "time", "can", "only", "other", "new", "some",
    "could", "these", "two", "may", "first", "then", "than", "like", "my", "now", "over",
    "such", "our", "man", "me", "even", "most", "made", "after", "also", "did", "many",
    "before", "must", "through", "back", "years", "where", "much", "way", "well", "down",
    "should", "because", "each", "just", "those", "people", "how", "too", "little",
    "state", "good", "very", "make", "world", "still", "own", "see", "men", "work",
    "long", "get", "here", "between", "both", "life", "being", "under", "never", "day",
    "same", "another", "know", "while", "last", "might", "us", "great", "old", "year",
    "off", "come", "since", "against", "go", "came", "right", "used", "take", "three",
)


@dataclass(frozen=True)
class Prompts:
    """The prompts a sweep sends in turn, and how they were made (for the result)."""

    texts: tuple[str, ...]
    source: str  # body | fixed | synthetic
    tokens_target: int | None = None
    sigma: float | None = None

    def record(self) -> dict[str, Any]:
        return {"source": self.source, "count": len(self.texts),
                "tokens_target": self.tokens_target, "sigma": self.sigma,
                "tokens_source": "estimated" if self.source == "synthetic" else None}


def synthetic(tokens: int, sigma: float, count: int, seed: int) -> tuple[str, ...]:
    """`count` prompts of about `tokens` ± `sigma` tokens (a normal draw, at least one
    word), seeded: the same arguments give the same prompts."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        n = max(1, round(rng.gauss(tokens, sigma))) if sigma else tokens
        texts.append(" ".join(rng.choice(WORDS) for _ in range(n)))
    return tuple(texts)


def prompts(task: TaskSpec, seed: int) -> Prompts:
    spec: Mapping[str, Any] = task.frontmatter.get("load") or {}
    given = spec.get("prompts", "body")
    if isinstance(given, list):
        return Prompts(tuple(given), "fixed")
    if given == "synthetic":
        tokens = int(spec.get("prompt_tokens", 128))
        sigma = float(spec.get("prompt_sigma", 0))
        count = int(spec.get("prompt_count", DEFAULT_PROMPT_COUNT))
        return Prompts(synthetic(tokens, sigma, count, seed), "synthetic", tokens, sigma)
    return Prompts((task.body,), "body")


def numbers(text: str, option: str, integer: bool) -> list[float]:
    """`1,2,4` → [1, 2, 4]; UsageError naming the option for anything else."""
    values: list[float] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            value = int(part) if integer else float(part)
        except ValueError:
            raise UsageError(f"{option} {text!r}: {part!r} is not "
                             f"{'a whole number' if integer else 'a number'}") from None
        if not 0 < value < float("inf") or (integer and value > 4096):
            raise UsageError(f"{option} {text!r}: {part} is out of range")
        values.append(value)
    if not values:
        raise UsageError(f"{option}: give at least one value")
    return values


@dataclass(frozen=True)
class Given:
    """The sweep options of the command line (None: the task's, else the default)."""

    concurrency: str | None = None
    rate: str | None = None
    arrivals: str | None = None
    requests: int | None = None
    duration_s: float | None = None
    warmup: int | None = None
    saturation: bool = False
    seed: int = 0


def levels(task: TaskSpec, given: Given) -> list[Level]:
    """The levels to run, in order: the command line's sweep over the task's; a saturation
    sweep starts at 1 and doubles (the runner stops it at the knee)."""
    spec: Mapping[str, Any] = task.frontmatter.get("load") or {}
    if given.concurrency and given.rate:
        raise UsageError("--concurrency and --rate: give one sweep")
    if given.saturation and given.rate:
        raise UsageError("--saturation sweeps concurrency: drop --rate")
    requests = given.requests or spec.get("requests")
    duration = given.duration_s or spec.get("duration_s")
    if requests is None and duration is None:
        requests = DEFAULT_REQUESTS
    warmup = given.warmup if given.warmup is not None else spec.get("warmup", DEFAULT_WARMUP)
    arrivals = given.arrivals or spec.get("arrivals", "constant")
    base = Level(requests=requests, duration_s=duration, warmup=int(warmup), seed=given.seed)
    if given.saturation:
        top = int(max(numbers(given.concurrency, "--concurrency", True))) \
            if given.concurrency else SATURATION_MAX
        values, c = [], SATURATION_START
        while c <= top:
            values.append(c)
            c *= 2
        return [replace(base, concurrency=v) for v in values]
    if given.rate or (not given.concurrency and spec.get("rate")):
        rates = numbers(given.rate, "--rate", False) if given.rate else spec["rate"]
        return [replace(base, rate=float(r), arrivals=arrivals) for r in rates]
    streams = numbers(given.concurrency, "--concurrency", True) if given.concurrency else \
        spec.get("concurrency", DEFAULT_CONCURRENCY)
    return [replace(base, concurrency=int(c)) for c in streams]


def saturated(throughputs: list[float], errors_share: float) -> bool:
    """Whether a saturation sweep stops after its latest level: most of its requests
    failed, or its throughput grew less than 10 % over the best before it."""
    if errors_share > 0.5:
        return True
    if len(throughputs) < 2:
        return False
    return throughputs[-1] < 1.1 * max(throughputs[:-1])
