"""The statistics of the reports, pure and seeded: intervals for a pass rate, the paired
difference of two pass rates over tasks, ratios of timings, and unbiased pass@k.

Tasks are the unit of every interval: the attempts of one task are not independent
samples (the same prompt, the same checks), so an interval over attempts would be too
narrow. Every estimate carries the method that made it and its n.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
SEED = 20261201  # the bootstrap's fixed seed: the same results give the same interval
RESAMPLES = 2000

# (passes, attempts) of one task, scored as the pass rate counts them
TaskCount = tuple[int, int]

WILSON = "Wilson score interval over tasks (one attempt each)"
CLUSTERED = ("normal interval over tasks, cluster-robust (attempts of a task are not "
             "independent), never narrower than the Wilson interval over attempts")
MCNEMAR = "exact McNemar test (one attempt per task on each side; interval: exact, given the " \
          "discordant tasks)"
BOOTSTRAP = "paired bootstrap over tasks"
RATIO = "ratio of means, paired bootstrap over tasks"
# A bootstrap over fewer tasks has too few distinct resamples to be an interval at all.
MIN_BOOTSTRAP_TASKS = 5
TOO_FEW = f"no interval: fewer than {MIN_BOOTSTRAP_TASKS} tasks to resample"


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95 % interval, how it was computed, and over how many tasks.
    `significant`: the interval excludes `null` (0 for a difference, 1 for a ratio); no
    interval (None: too few tasks) is never significant."""

    value: float
    low: float | None
    high: float | None
    n: int
    method: str
    null: float = 0.0
    p_value: float | None = None
    seed: int | None = None
    resamples: int | None = None

    @property
    def significant(self) -> bool:
        if self.low is None or self.high is None:
            return False
        return not self.low <= self.null <= self.high


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of `passes` out of `n` independent trials."""
    if n == 0:
        return 0.0, 1.0
    p = passes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_rate(counts: Sequence[TaskCount]) -> Estimate | None:
    """Passes ÷ attempts over tasks, with its interval over tasks: Wilson when each task
    has one attempt, else the cluster-robust normal interval of a ratio estimator."""
    counts = [(c, n) for c, n in counts if n]
    if not counts:
        return None
    passes = sum(c for c, _ in counts)
    total = sum(n for _, n in counts)
    rate = passes / total
    tasks = len(counts)
    if all(n == 1 for _, n in counts):
        low, high = wilson(passes, total)
        return Estimate(rate, low, high, tasks, WILSON)
    # Clustering only widens an interval; with few tasks, or tasks that happen to agree, the
    # cluster-robust one can come out narrower than the attempts alone allow, even empty.
    low, high = wilson(passes, total)
    if tasks >= 2:
        spread = sum((c - rate * n) ** 2 for c, n in counts) * tasks / (tasks - 1)
        half = Z95 * math.sqrt(spread) / total
        low, high = min(low, max(0.0, rate - half)), max(high, min(1.0, rate + half))
    return Estimate(rate, low, high, tasks, CLUSTERED)


def _log_pmf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p)."""
    return min(1.0, sum(math.exp(_log_pmf(j, n, p)) for j in range(k, n + 1)))


def _bisect(rises: bool, tail: Callable[[float], float], target: float) -> float:
    """The p in [0, 1] where the monotone `tail(p)` crosses `target`."""
    low, high = 0.0, 1.0
    for _ in range(50):
        mid = (low + high) / 2
        if (tail(mid) < target) == rises:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def clopper_pearson(k: int, n: int, alpha: float = 1 - CONFIDENCE) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of k successes in n trials."""
    if n == 0:
        return 0.0, 1.0
    low = 0.0 if k == 0 else _bisect(True, lambda p: binomial_upper_tail(k, n, p), alpha / 2)
    high = 1.0 if k == n else _bisect(
        False, lambda p: 1.0 - binomial_upper_tail(k + 1, n, p), alpha / 2)
    return low, high


def mcnemar(only_a: int, only_b: int) -> float:
    """The exact McNemar test's two-sided p-value: of the tasks the two sides decided
    differently, how unlikely a split this uneven is if each side were as likely to win."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    smaller = min(only_a, only_b)
    return min(1.0, 2 * (1.0 - binomial_upper_tail(smaller + 1, n, 0.5)))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _percentiles(values: list[float]) -> tuple[float, float]:
    values.sort()
    tail = (1 - CONFIDENCE) / 2
    last = len(values) - 1
    return values[round(tail * last)], values[round((1 - tail) * last)]


def paired_difference(pairs: Sequence[tuple[TaskCount, TaskCount]], seed: int = SEED,
                      resamples: int = RESAMPLES) -> Estimate | None:
    """A's pass rate minus B's over the tasks both attempted (each side's rate per task,
    then their mean over tasks). One attempt per task on each side: the exact McNemar
    test. More: a paired bootstrap over tasks (`resamples`, `seed`), percentile interval."""
    pairs = [(a, b) for a, b in pairs if a[1] and b[1]]
    if not pairs:
        return None
    tasks = len(pairs)
    diffs = [a[0] / a[1] - b[0] / b[1] for a, b in pairs]
    value = _mean(diffs)
    if all(a[1] == 1 and b[1] == 1 for a, b in pairs):
        only_a = sum(a[0] > b[0] for a, b in pairs)
        only_b = sum(b[0] > a[0] for a, b in pairs)
        split = only_a + only_b
        low, high = clopper_pearson(only_a, split)
        scale = split / tasks  # the difference is (only_a − only_b) / tasks
        # + 0.0: no "-0.0" when no task was decided differently
        return Estimate(value, scale * (2 * low - 1) + 0.0, scale * (2 * high - 1) + 0.0,
                        tasks, MCNEMAR, p_value=mcnemar(only_a, only_b))
    if tasks < MIN_BOOTSTRAP_TASKS:
        return Estimate(value, None, None, tasks, TOO_FEW)
    rng = random.Random(seed)
    means = [_mean(rng.choices(diffs, k=tasks)) for _ in range(resamples)]
    low, high = _percentiles(means)
    return Estimate(value, low, high, tasks, BOOTSTRAP, seed=seed, resamples=resamples)


def ratio_of_means(pairs: Sequence[tuple[float, float]], seed: int = SEED,
                   resamples: int = RESAMPLES) -> Estimate | None:
    """mean(A) ÷ mean(B) over tasks with a figure on both sides (one mean per task and
    side), with a paired bootstrap interval over tasks; `null` 1."""
    pairs = [(a, b) for a, b in pairs if b > 0 and a >= 0]
    if not pairs:
        return None
    tasks = len(pairs)
    value = sum(a for a, _ in pairs) / sum(b for _, b in pairs)
    if tasks < MIN_BOOTSTRAP_TASKS:
        return Estimate(value, None, None, tasks, TOO_FEW, null=1.0)
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        sample = rng.choices(pairs, k=tasks)
        ratios.append(sum(a for a, _ in sample) / sum(b for _, b in sample))
    low, high = _percentiles(ratios)
    return Estimate(value, low, high, tasks, RATIO, null=1.0, seed=seed, resamples=resamples)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task from n samples with c correct (Chen et al. 2021):
    1 − C(n−c, k) / C(n, k), computed as a stable product."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, not {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


PASS_AT_K = (1, 2, 3, 5, 10, 20, 50, 100)


def mean_pass_at_k(counts: Sequence[TaskCount]) -> dict[int, float]:
    """pass@k averaged over tasks, for each k of PASS_AT_K that every task's samples allow."""
    counts = [(c, n) for c, n in counts if n]
    if not counts:
        return {}
    fewest = min(n for _, n in counts)
    return {k: _mean([pass_at_k(n, c, k) for c, n in counts]) for k in PASS_AT_K if k <= fewest}
