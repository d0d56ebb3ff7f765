"""Distributions of a level: percentiles (linear, as numpy's default), mean, a compact
histogram, goodput against SLOs, and a seeded bootstrap interval for a percentile."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

PERCENTILES = (50, 90, 99)
# Histogram edges in ms: powers of two from 1/8 ms to about 18 h, so every level of every
# runtime shares one set of buckets and two levels compare bucket by bucket.
EDGE_LOW_MS = 0.125
BUCKETS = 30
SLO_NAMES = {"ttft_ms": "ttft_ms", "itl_ms": "itl_mean_ms", "e2e_ms": "e2e_ms"}
BOOTSTRAP_RESAMPLES = 1000


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0–100) by linear interpolation between order statistics
    (numpy's default `linear` method); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def histogram(values: Sequence[float]) -> dict[str, Any]:
    """Counts per power-of-two bucket of ms, only the non-empty ones: `{"edges_ms": [lower
    edge of bucket 0], "counts": {bucket index: count}}`; bucket i holds values from
    EDGE_LOW_MS·2^(i−1) up to EDGE_LOW_MS·2^i (bucket 0: below EDGE_LOW_MS)."""
    counts: dict[str, int] = {}
    for value in values:
        index = 0 if value < EDGE_LOW_MS else min(
            BUCKETS - 1, 1 + math.floor(math.log2(value / EDGE_LOW_MS)))
        counts[str(index)] = counts.get(str(index), 0) + 1
    return {"low_ms": EDGE_LOW_MS, "counts": dict(sorted(counts.items(),
                                                         key=lambda kv: int(kv[0])))}


def distribution(values: Sequence[float]) -> dict[str, Any]:
    """n, mean, min, max, p50/p90/p99 and the histogram of `values` (nulls when empty)."""
    figures: dict[str, Any] = {"n": len(values)}
    figures["mean"] = sum(values) / len(values) if values else None
    figures["min"] = min(values) if values else None
    figures["max"] = max(values) if values else None
    for q in PERCENTILES:
        figures[f"p{q}"] = percentile(values, q)
    figures["histogram"] = histogram(values)
    return figures


def parse_slo(text: str) -> dict[str, float]:
    """`ttft_ms=500,itl_ms=50` → {name: limit}; ValueError naming what is wrong."""
    slo: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or name.strip() not in SLO_NAMES:
            raise ValueError(f"--slo {part!r}: use NAME=MS with NAME one of "
                             f"{', '.join(SLO_NAMES)}")
        try:
            limit = float(value)
        except ValueError:
            raise ValueError(f"--slo {part!r}: {value!r} is not a number") from None
        if not math.isfinite(limit) or limit <= 0:
            raise ValueError(f"--slo {part!r}: the limit must be a positive number")
        slo[name.strip()] = limit
    return slo


def meets(request: Mapping[str, float | None], slo: Mapping[str, float]) -> bool:
    """Whether one completed request meets every SLO (an unknown figure does not: a
    one-token answer has no ITL, and is not counted good for it)."""
    for name, limit in slo.items():
        value = request.get(SLO_NAMES[name])
        if value is None or value > limit:
            return False
    return True


def bootstrap_interval(values: Sequence[float], q: float, seed: int = 0,
                       resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95
                       ) -> tuple[float, float] | None:
    """A percentile bootstrap interval for the q-th percentile of `values` (seeded: the
    same values give the same interval); None for fewer than 2 values."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    n = len(values)
    estimates = sorted(percentile([values[rng.randrange(n)] for _ in range(n)], q) or 0.0
                       for _ in range(resamples))
    alpha = (1 - level) / 2
    return (percentile(estimates, alpha * 100) or 0.0,
            percentile(estimates, (1 - alpha) * 100) or 0.0)


def difference_interval(a: Sequence[float], b: Sequence[float], q: float, seed: int = 0,
                        resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95
                        ) -> tuple[float, float] | None:
    """A bootstrap interval for percentile_q(b) − percentile_q(a), each side resampled on
    its own (independent samples); None when either side has fewer than 2 values."""
    return difference_intervals(a, b, (q,), seed, resamples, level).get(q)


def difference_intervals(a: Sequence[float], b: Sequence[float], qs: Sequence[float],
                         seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES,
                         level: float = 0.95) -> dict[float, tuple[float, float]]:
    """`difference_interval` for each of `qs`, from one set of resamples (empty when either
    side has fewer than 2 values)."""
    if len(a) < 2 or len(b) < 2:
        return {}
    rng = random.Random(seed)
    diffs: dict[float, list[float]] = {q: [] for q in qs}
    for _ in range(resamples):
        ra, rb = sorted(rng.choices(a, k=len(a))), sorted(rng.choices(b, k=len(b)))
        for q in qs:
            diffs[q].append(_sorted_percentile(rb, q) - _sorted_percentile(ra, q))
    alpha = (1 - level) / 2
    found = {}
    for q, values in diffs.items():
        values.sort()
        found[q] = (_sorted_percentile(values, alpha * 100),
                    _sorted_percentile(values, (1 - alpha) * 100))
    return found


def _sorted_percentile(ordered: Sequence[float], q: float) -> float:
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
