"""The report's statistics pinned to known figures: Wilson and Clopper-Pearson bounds as
published, exact McNemar p-values as fractions, the clustered interval by hand, and the
seeded bootstrap against a plain reimplementation and against its analytic distribution.

Where a figure comes from a one-off computation, the comment says how (scipy 1.17.1:
`stats.binomtest(k, n).proportion_ci(method="wilson")`, `stats.beta.ppf`,
`stats.binomtest(b, b + c, 0.5).pvalue`); the literals are pasted, scipy is not imported.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from benchrig.report.stats import (
    BOOTSTRAP,
    CLUSTERED,
    MCNEMAR,
    RATIO,
    RESAMPLES,
    SEED,
    TOO_FEW,
    WILSON,
    TaskCount,
    binomial_upper_tail,
    clopper_pearson,
    mcnemar,
    mean_pass_at_k,
    paired_difference,
    pass_at_k,
    pass_rate,
    ratio_of_means,
    wilson,
)

# Newcombe R.G. (1998), "Two-sided confidence intervals for the single proportion:
# comparison of seven methods", Stat Med 17:857-872, Table II: method 3 (Wilson score, no
# continuity correction) and method 5 (exact, Clopper-Pearson), 4 decimals as printed.
NEWCOMBE_WILSON = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
]
NEWCOMBE_EXACT = [
    (81, 263, 0.2527, 0.3676),
    (15, 148, 0.0578, 0.1617),
    (0, 20, 0.0, 0.1684),
    (1, 29, 0.0009, 0.1776),
]
# Wilson 95 % by hand: for 0/n the upper bound is z²/(n + z²) = 3.8415/13.8415; for k/n
# (centre ± z·sqrt(n·p·q + z²/4)) / (n + z²); 6 decimals agree with scipy's.
HAND_WILSON = [
    (0, 10, 0.0, 0.277533),
    (5, 10, 0.236593, 0.763407),
    (10, 10, 0.722467, 1.0),
    (81, 263, 0.255289, 0.366210),
]
# Clopper-Pearson 95 %: scipy `beta.ppf(0.025, k, n-k+1)`, `beta.ppf(0.975, k+1, n-k)`.
SCIPY_EXACT = [
    (0, 10, 0.0, 0.308497),
    (5, 10, 0.187086, 0.812914),
    (10, 10, 0.691503, 1.0),
    (81, 263, 0.252737, 0.367622),
    (1, 29, 0.000873, 0.177644),
]


def _singles(passes: int, fails: int) -> list[TaskCount]:
    return [(1, 1)] * passes + [(0, 1)] * fails


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_WILSON)
def test_wilson_matches_newcombe_1998(k: int, n: int, low: float, high: float) -> None:
    assert wilson(k, n) == pytest.approx((low, high), abs=5e-5)


@pytest.mark.parametrize(("k", "n", "low", "high"), HAND_WILSON)
def test_wilson_matches_the_hand_computation(k: int, n: int, low: float, high: float) -> None:
    assert wilson(k, n) == pytest.approx((low, high), abs=5e-7)


@pytest.mark.parametrize(("k", "n", "low", "high"), HAND_WILSON + NEWCOMBE_WILSON[1:])
def test_a_pass_rate_over_single_attempts_is_the_wilson_interval(
        k: int, n: int, low: float, high: float) -> None:
    """Through the public pass rate: one attempt per task, the unit is the task."""
    found = pass_rate(_singles(k, n - k))
    assert found is not None
    assert (found.method, found.n) == (WILSON, n) and found.value == pytest.approx(k / n)
    assert (found.low, found.high) == pytest.approx((low, high), abs=5e-5)


def test_the_wilson_interval_of_nothing_is_everything() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    assert pass_rate([]) is None and pass_rate([(0, 0), (0, 0)]) is None


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_EXACT)
def test_clopper_pearson_matches_newcombe_1998(k: int, n: int, low: float,
                                               high: float) -> None:
    assert clopper_pearson(k, n) == pytest.approx((low, high), abs=5e-5)


@pytest.mark.parametrize(("k", "n", "low", "high"), SCIPY_EXACT)
def test_clopper_pearson_matches_the_beta_quantiles(k: int, n: int, low: float,
                                                    high: float) -> None:
    assert clopper_pearson(k, n) == pytest.approx((low, high), abs=5e-7)
    assert clopper_pearson(0, 0) == (0.0, 1.0)


def test_the_binomial_tail_is_the_exact_sum() -> None:
    """P(X ≥ k) for Binomial(n, p) against the sum of C(n, j) pʲ qⁿ⁻ʲ in fractions."""
    for n, p in [(8, Fraction(1, 2)), (10, Fraction(1, 3)), (7, Fraction(9, 10))]:
        for k in range(n + 2):
            exact = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
            assert binomial_upper_tail(k, n, float(p)) == pytest.approx(float(exact),
                                                                       abs=1e-12)
    # a certain or impossible success
    assert binomial_upper_tail(0, 5, 0.0) == 1.0 and binomial_upper_tail(1, 5, 0.0) == 0.0
    assert binomial_upper_tail(5, 5, 1.0) == 1.0 and binomial_upper_tail(4, 5, 1.0) == 1.0


# Exact McNemar: p = min(1, 2·Σ_{j ≤ min(b, c)} C(b+c, j) / 2^(b+c)), as fractions by hand
# (and scipy's binomtest(b, b + c, 0.5).pvalue agrees). (1, 7) is the airway example of
# Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91: exact conditional p = 0.070.
MCNEMAR_EXACT = [
    (1, 7, Fraction(9, 128)),
    (7, 1, Fraction(9, 128)),
    (0, 6, Fraction(1, 32)),
    (1, 9, Fraction(11, 512)),
    (3, 10, Fraction(189, 2048)),
    (2, 12, Fraction(53, 4096)),
    (10, 25, Fraction(71613631, 4294967296)),
    (5, 5, Fraction(1)),
    (0, 1, Fraction(1)),
    (0, 0, Fraction(1)),
]


@pytest.mark.parametrize(("only_a", "only_b", "p"), MCNEMAR_EXACT)
def test_mcnemar_exact_p_values(only_a: int, only_b: int, p: Fraction) -> None:
    assert mcnemar(only_a, only_b) == pytest.approx(float(p), rel=1e-9)


def test_mcnemar_through_the_paired_difference() -> None:
    """23 tasks, one attempt each side: 10 both pass, 5 both fail, 1 only A, 7 only B.
    Difference (1 − 7)/23; interval (8/23)·(2·CP(1, 8) − 1) with CP(1, 8) = [0.0031597,
    0.5265097] (scipy beta.ppf(0.025, 1, 8), beta.ppf(0.975, 2, 7)); p = 9/128."""
    pairs = ([((1, 1), (1, 1))] * 10 + [((0, 1), (0, 1))] * 5
             + [((1, 1), (0, 1))] + [((0, 1), (1, 1))] * 7)
    found = paired_difference(pairs)
    assert found is not None
    assert (found.method, found.n, found.null) == (MCNEMAR, 23, 0.0)
    assert found.value == pytest.approx(-6 / 23)
    assert (found.low, found.high) == pytest.approx((-0.345628018, 0.018441510), abs=1e-8)
    assert found.p_value == pytest.approx(9 / 128)
    assert not found.significant  # the interval holds 0, as p > 0.05 says
    # one more task only B passes: p = 2·(1 + 9)/2^9 = 10/256 < 0.05 and the interval
    # leaves 0 out
    found = paired_difference([*pairs, ((0, 1), (1, 1))])
    assert found is not None and found.p_value == pytest.approx(10 / 256)
    assert found.high is not None and found.high < 0 and found.significant


def test_a_paired_difference_leaves_out_tasks_without_a_verdict() -> None:
    found = paired_difference([((1, 1), (0, 1)), ((0, 0), (1, 1)), ((1, 1), (0, 0))])
    assert found is not None and found.n == 1 and found.value == 1.0
    assert paired_difference([((0, 0), (1, 1))]) is None


# ---- the clustered interval, by hand -------------------------------------------------------
# rate r = Σc / Σn; S = Σ(cᵢ − r·nᵢ)² · k/(k − 1); half = z·√S / Σn; the interval is the
# union of [r − half, r + half] (clipped to [0, 1]) and Wilson over all attempts.

def test_the_clustered_interval_by_hand_equal_sizes() -> None:
    """(3,4) (1,4) (4,4) (0,4) (2,4): r = 10/20; residuals 1, −1, 2, −2, 0; S = 10·5/4 =
    12.5; half = 1.959964·3.5355339/20 = 0.3464760: wider than Wilson(10, 20) =
    [0.299298, 0.700702]."""
    found = pass_rate([(3, 4), (1, 4), (4, 4), (0, 4), (2, 4)])
    assert found is not None and (found.method, found.n, found.value) == (CLUSTERED, 5, 0.5)
    assert (found.low, found.high) == pytest.approx((0.1535240, 0.8464760), abs=1e-7)


def test_the_clustered_interval_by_hand_unequal_sizes() -> None:
    """(2,3) (1,5) (4,4) (0,2) (3,6) (5,7): r = 15/27 = 5/9; residuals cᵢ − 5nᵢ/9 = 1/3,
    −16/9, 16/9, −10/9, −1/3, 10/9; Σ squares 730/81; S = 730/81·6/5 = 292/27; half =
    1.959964·√(292/27)/27 = 0.2387228 (Wilson(15, 27) = [0.373130, 0.724141] is narrower)."""
    found = pass_rate([(2, 3), (1, 5), (4, 4), (0, 2), (3, 6), (5, 7)])
    assert found is not None and (found.method, found.n) == (CLUSTERED, 6)
    assert found.value == pytest.approx(5 / 9)
    assert (found.low, found.high) == pytest.approx((0.3168328, 0.7942783), abs=1e-7)


def test_the_clustered_interval_never_narrower_than_wilson() -> None:
    """(1,5) (0,5) (0,5) (0,5): r = 1/20, S = (0.75² + 3·0.25²)·4/3 = 1, half = 0.0979982:
    the low end clips to 0 and Wilson(1, 20)'s upper 0.236131 is wider than 0.147998.
    Three tasks at 2/4 each: S = 0, so Wilson(6, 12) = [0.253782, 0.746218] alone."""
    found = pass_rate([(1, 5), (0, 5), (0, 5), (0, 5)])
    assert found is not None and found.method == CLUSTERED
    assert (found.low, found.high) == pytest.approx((0.0, 0.2361312), abs=1e-7)
    found = pass_rate([(2, 4), (2, 4), (2, 4)])
    assert found is not None and found.method == CLUSTERED
    assert (found.low, found.high) == pytest.approx((0.2537816, 0.7462184), abs=1e-7)
    # one task with several attempts: no spread to estimate, Wilson over its attempts
    found = pass_rate([(3, 5), (0, 0)])
    assert found is not None and (found.method, found.n) == (CLUSTERED, 1)
    assert (found.low, found.high) == pytest.approx(wilson(3, 5))


def test_the_clustered_interval_clips_at_one() -> None:
    """(5,5) (5,5) (5,5) (0,5): r = 15/20; residuals 1.25 ×3, −3.75; S = 18.75·4/3 = 25;
    half = 1.959964·5/20 = 0.4899910: [0.2600090, 1] (Wilson(15, 20) is [0.531299,
    0.888140])."""
    found = pass_rate([(5, 5), (5, 5), (5, 5), (0, 5)])
    assert found is not None and found.value == 0.75
    assert (found.low, found.high) == pytest.approx((0.2600090, 1.0), abs=1e-7)


# ---- the bootstrap -------------------------------------------------------------------------

def _plain_bootstrap(values: list[float], seed: int, resamples: int) -> tuple[float, float]:
    """The percentile bootstrap of a mean written out: `resamples` draws of len(values)
    with replacement (random.choices draws index ⌊random()·n⌋), sorted, the 2.5 % and
    97.5 % points taken at the nearest rank of resamples − 1."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[math.floor(rng.random() * n)] for _ in range(n)) / n
                   for _ in range(resamples))
    return means[round(0.025 * (resamples - 1))], means[round(0.975 * (resamples - 1))]


def _several_runs(seed: int, tasks: int) -> list[tuple[TaskCount, TaskCount]]:
    rng = random.Random(seed)
    return [((rng.randint(0, 5), 5), (rng.randint(0, 3), 3)) for _ in range(tasks)]


@pytest.mark.parametrize(("seed", "tasks", "resamples"),
                         [(SEED, 12, RESAMPLES), (1, 40, 500), (99, 5, 300)])
def test_the_bootstrap_matches_a_plain_reimplementation(seed: int, tasks: int,
                                                        resamples: int) -> None:
    pairs = _several_runs(seed, tasks)
    diffs = [a[0] / a[1] - b[0] / b[1] for a, b in pairs]
    found = paired_difference(pairs, seed=seed, resamples=resamples)
    assert found is not None
    assert (found.method, found.n, found.seed, found.resamples) == (
        BOOTSTRAP, tasks, seed, resamples)
    assert found.value == pytest.approx(sum(diffs) / tasks)
    assert (found.low, found.high) == pytest.approx(_plain_bootstrap(diffs, seed, resamples))


def test_the_bootstrap_matches_its_analytic_distribution() -> None:
    """40 tasks, two attempts a side: on 20 A passes both and B neither (difference 1), on 20
    they agree (0). A resampled mean is then Binomial(40, ½)/40 exactly, whose 2.5 % and
    97.5 % quantiles are 14 and 26 (scipy binom.ppf): the interval is [0.35, 0.65]."""
    pairs = [((2, 2), (0, 2))] * 20 + [((1, 2), (1, 2))] * 20
    found = paired_difference(pairs, resamples=4000)
    assert found is not None and found.value == 0.5
    assert (found.low, found.high) == pytest.approx((14 / 40, 26 / 40))
    # its spread: the plug-in standard error √(p·q/n) = √(0.25/40) = 0.0790569
    rng = random.Random(SEED)
    diffs = [1.0] * 20 + [0.0] * 20
    means = [sum(rng.choices(diffs, k=40)) / 40 for _ in range(4000)]
    centre = sum(means) / len(means)
    spread = math.sqrt(sum((m - centre) ** 2 for m in means) / len(means))
    assert spread == pytest.approx(math.sqrt(0.25 / 40), rel=0.05)
    assert found.low is not None and found.high is not None
    assert found.high - found.low == pytest.approx(2 * 1.96 * spread, rel=0.1)


def test_too_few_tasks_for_a_bootstrap_have_no_interval() -> None:
    pairs = _several_runs(3, 4)
    found = paired_difference(pairs)
    assert found is not None and found.method == TOO_FEW
    assert (found.low, found.high, found.n) == (None, None, 4) and not found.significant
    assert paired_difference(_several_runs(3, 5)) is not None
    assert paired_difference(_several_runs(3, 5)).method == BOOTSTRAP  # type: ignore[union-attr]


def _plain_ratio_bootstrap(pairs: list[tuple[float, float]], seed: int,
                           resamples: int) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(pairs)
    ratios = []
    for _ in range(resamples):
        drawn = [pairs[math.floor(rng.random() * n)] for _ in range(n)]
        ratios.append(sum(a for a, _ in drawn) / sum(b for _, b in drawn))
    ratios.sort()
    return ratios[round(0.025 * (resamples - 1))], ratios[round(0.975 * (resamples - 1))]


def test_the_ratio_bootstrap_matches_a_plain_reimplementation() -> None:
    rng = random.Random(5)
    pairs = [(rng.uniform(50, 400), rng.uniform(50, 400)) for _ in range(15)]
    found = ratio_of_means(pairs)
    assert found is not None
    assert (found.method, found.n, found.null, found.seed, found.resamples) == (
        RATIO, 15, 1.0, SEED, RESAMPLES)
    assert found.value == pytest.approx(sum(a for a, _ in pairs) / sum(b for _, b in pairs))
    assert (found.low, found.high) == pytest.approx(_plain_ratio_bootstrap(pairs, SEED,
                                                                           RESAMPLES))


def test_a_ratio_leaves_out_pairs_it_cannot_divide() -> None:
    """No B figure (0 or less) or a negative A: left out; a zero A stays (A took no time)."""
    found = ratio_of_means([(10.0, 0.0), (-1.0, 5.0), (0.0, 4.0), (6.0, 4.0)])
    assert found is not None and found.n == 2 and found.value == pytest.approx(6 / 8)
    assert found.method == TOO_FEW and found.null == 1.0 and not found.significant
    assert ratio_of_means([(1.0, 0.0)]) is None


def test_pass_at_k_known_values() -> None:
    """1 − C(n−c, k)/C(n, k) by hand: n=10, c=3, k=5 → 1 − 21/252; n=200, c=1, k=100 → ½."""
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    assert pass_at_k(200, 1, 100) == pytest.approx(0.5)
    assert pass_at_k(10, 0, 1) == 0.0 and pass_at_k(10, 10, 10) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 1, 5) == 1.0  # k reaches the only pass: n − c < k


# ---- edges: what docs/reports.md promises and where the methods switch --------------------

def test_the_documented_seed_resamples_and_ks() -> None:
    """docs/reports.md: 2000 resamples with the fixed seed 20261201 (printed), and pass@k for
    every k in 1, 2, 3, 5, 10, 20, 50, 100 that the samples allow."""
    found = paired_difference(_several_runs(7, 10))
    assert found is not None and (found.seed, found.resamples) == (20261201, 2000)
    ratio = ratio_of_means([(float(a), 1.0) for a in range(1, 8)])
    assert ratio is not None and (ratio.seed, ratio.resamples) == (20261201, 2000)
    assert list(mean_pass_at_k([(3, 100), (40, 100)])) == [1, 2, 3, 5, 10, 20, 50, 100]
    assert list(mean_pass_at_k([(3, 19), (40, 100)])) == [1, 2, 3, 5, 10]


def test_a_task_without_samples_does_not_limit_pass_at_k() -> None:
    assert mean_pass_at_k([(1, 3), (0, 0)]) == {1: pytest.approx(1 / 3), 2: pytest.approx(2 / 3),
                                                3: 1.0}
    assert mean_pass_at_k([(0, 0)]) == {}


def test_two_tasks_are_enough_for_the_clustered_interval() -> None:
    """(4,4) (0,4): r = 4/8; residuals ±2; S = 8·2/1 = 16; half = 1.959964·4/8 = 0.98:
    [0, 1] after clipping, wider than Wilson(4, 8) = [0.215216, 0.784784] (scipy)."""
    found = pass_rate([(4, 4), (0, 4)])
    assert found is not None and (found.method, found.n) == (CLUSTERED, 2)
    assert (found.low, found.high) == pytest.approx((0.0, 1.0), abs=1e-9)
    agree = pass_rate([(2, 4), (2, 4)])  # S = 0: Wilson(4, 8) over the attempts
    assert agree is not None and (agree.low, agree.high) == pytest.approx(
        (0.215216, 0.784784), abs=1e-6)


def test_clopper_pearson_of_a_single_trial() -> None:
    """k = 0 of 1: [0, 1 − 0.025] = [0, 0.975]; k = 1 of 1: [0.025, 1] (by hand: the upper
    bound solves (1 − p) = α/2, the lower p = α/2)."""
    assert clopper_pearson(0, 1) == pytest.approx((0.0, 0.975), abs=1e-9)
    assert clopper_pearson(1, 1) == pytest.approx((0.025, 1.0), abs=1e-9)


def test_one_side_with_several_attempts_is_not_a_mcnemar_pair() -> None:
    """A ran each task once, B five times: per-task rates are not 0/1 on both sides, so the
    paired bootstrap, not the exact test."""
    pairs = [((1, 1), (3, 5)), ((0, 1), (1, 5)), ((1, 1), (5, 5)), ((1, 1), (2, 5)),
             ((0, 1), (0, 5)), ((1, 1), (4, 5))]
    for mixed in (pairs, [(b, a) for a, b in pairs]):
        found = paired_difference(mixed)
        assert found is not None and found.method == BOOTSTRAP and found.p_value is None


def test_no_discordant_task_gives_a_positive_zero_interval() -> None:
    """Identical single runs: the interval is [0, 0], printed "+0.0", never "-0.0"."""
    found = paired_difference([((1, 1), (1, 1)), ((0, 1), (0, 1)), ((1, 1), (1, 1))])
    assert found is not None and found.method == MCNEMAR
    assert (found.low, found.high, found.p_value) == (0.0, 0.0, 1.0)
    assert found.low is not None and found.high is not None
    assert math.copysign(1.0, found.low) == math.copysign(1.0, found.high) == 1.0
    assert found.significant is False


def test_no_interval_is_never_significant_and_estimates_are_frozen() -> None:
    found = ratio_of_means([(2.0, 1.0), (4.0, 2.0)])
    assert found is not None and found.low is None and found.significant is False
    with pytest.raises(AttributeError):
        found.value = 1.0  # type: ignore[misc]


def test_a_ratio_keeps_figures_below_one() -> None:
    """Decode speeds of a slow model (0.5 tokens/s) are figures like any other."""
    found = ratio_of_means([(1.0, 0.5), (1.2, 0.6), (0.8, 0.4), (0.2, 0.1), (2.0, 1.0)])
    assert found is not None and found.n == 5 and found.value == pytest.approx(2.0)
    assert (found.low, found.high) == pytest.approx((2.0, 2.0)) and found.significant
