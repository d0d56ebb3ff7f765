"""The report's statistics: intervals that cover a known difference as often as they claim,
identical sets that are called "not significant", and the unbiased pass@k."""

from __future__ import annotations

import itertools
import random

import pytest

from benchrig.report.stats import (
    BOOTSTRAP,
    CLUSTERED,
    MCNEMAR,
    WILSON,
    TaskCount,
    clopper_pearson,
    mcnemar,
    mean_pass_at_k,
    paired_difference,
    pass_at_k,
    pass_rate,
    ratio_of_means,
    wilson,
)

SEEDS = 200


def _side(rng: random.Random, rates: list[float], runs: int) -> list[TaskCount]:
    return [(sum(rng.random() < p for _ in range(runs)), runs) for p in rates]


def _coverage(runs: int, tasks: int, gap: float) -> tuple[float, float]:
    """Over SEEDS synthetic pairs whose true difference is `gap` on every task: the share of
    intervals that cover it, and the share that (rightly) exclude 0."""
    covered = excluded = 0
    for seed in range(SEEDS):
        rng = random.Random(seed)
        rates = [rng.uniform(gap + 0.05, 0.95) for _ in range(tasks)]
        a = _side(rng, rates, runs)
        b = _side(rng, [p - gap for p in rates], runs)
        found = paired_difference(list(zip(a, b, strict=True)), seed=seed, resamples=400)
        assert found is not None
        covered += found.low <= gap <= found.high
        excluded += found.significant
    return covered / SEEDS, excluded / SEEDS


def test_the_bootstrap_interval_covers_a_known_difference() -> None:
    """5 runs of 40 tasks, A better by 0.2 on each: a 95 % interval covers 0.2 in about 95 %
    of the seeds (a percentile bootstrap runs a little short with 40 tasks)."""
    covered, excluded = _coverage(runs=5, tasks=40, gap=0.2)
    assert 0.90 <= covered <= 0.99
    assert excluded > 0.9  # and it is narrow enough to see the difference


def test_the_mcnemar_interval_covers_a_known_difference() -> None:
    """One attempt per task (60 tasks), A better by 0.25: the exact interval covers it."""
    covered, excluded = _coverage(runs=1, tasks=60, gap=0.25)
    assert covered >= 0.92
    assert excluded > 0.6


@pytest.mark.parametrize(("runs", "method"), [(1, MCNEMAR), (5, BOOTSTRAP)])
def test_identical_sets_are_not_significant(runs: int, method: str) -> None:
    rng = random.Random(7)
    side = _side(rng, [rng.random() for _ in range(30)], runs)
    found = paired_difference(list(zip(side, side, strict=True)))
    assert found is not None
    assert (found.value, found.method, found.n) == (0.0, method, 30)
    assert found.low <= 0.0 <= found.high and not found.significant
    if method == MCNEMAR:
        assert found.p_value == 1.0


def test_the_bootstrap_is_seeded_and_says_so() -> None:
    pairs = [((3, 5), (1, 5)), ((2, 5), (2, 5)), ((5, 5), (4, 5))] * 4
    first, again = paired_difference(pairs), paired_difference(pairs)
    assert first == again and first is not None
    assert first.seed is not None and first.resamples


def test_mcnemar_exact_values() -> None:
    assert mcnemar(0, 6) == pytest.approx(2 / 64)
    assert mcnemar(1, 9) == pytest.approx(2 * 11 / 1024)
    assert mcnemar(4, 4) == 1.0 and mcnemar(0, 0) == 1.0


def test_clopper_pearson_known_values() -> None:
    assert clopper_pearson(0, 10)[1] == pytest.approx(0.3085, abs=1e-4)
    assert clopper_pearson(5, 10) == pytest.approx((0.1871, 0.8129), abs=1e-4)
    assert clopper_pearson(10, 10) == pytest.approx((0.6915, 1.0), abs=1e-4)


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    """Against its definition: the share of k-subsets of the n samples with a pass."""
    for n, c in [(5, 0), (5, 1), (5, 3), (6, 6), (7, 2)]:
        samples = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(samples, k))
            expected = sum(any(s) for s in subsets) / len(subsets)
            assert pass_at_k(n, c, k) == pytest.approx(expected)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_pass_at_k_only_for_the_ks_the_samples_allow() -> None:
    assert set(mean_pass_at_k([(1, 3), (0, 5)])) == {1, 2, 3}
    assert mean_pass_at_k([(1, 3), (0, 5)])[1] == pytest.approx((1 / 3 + 0) / 2)
    assert mean_pass_at_k([]) == {}


def test_a_pass_rate_interval_is_over_tasks() -> None:
    """Five attempts each of ten tasks that always pass or always fail are ten
    observations, not fifty: the interval is wider than fifty independent attempts'."""
    counts = [(5, 5)] * 5 + [(0, 5)] * 5
    found = pass_rate(counts)
    assert found is not None and found.method == CLUSTERED and found.n == 10
    naive = wilson(25, 50)
    assert found.high - found.low > naive[1] - naive[0]
    single = pass_rate([(1, 1), (0, 1), (1, 1)])
    assert single is not None and single.method == WILSON
    assert (single.low, single.high) == pytest.approx(wilson(2, 3))


def test_ratios_of_timings() -> None:
    same = [(100.0, 100.0), (250.0, 250.0), (80.0, 80.0)]
    found = ratio_of_means(same)
    assert found is not None and found.value == 1.0 and not found.significant
    slower = [(2 * b, b) for b in (100.0, 250.0, 80.0, 120.0, 300.0)]
    found = ratio_of_means(slower)
    assert found is not None and found.value == pytest.approx(2.0)
    assert found.low == pytest.approx(2.0) and found.significant
