"""Load statistics pinned to hand-computed values (numpy's linear percentiles), the histogram's
buckets, SLO parsing and goodput, and the seeded bootstrap."""

from __future__ import annotations

import pytest

from benchrig.load.distributions import (
    bootstrap_interval,
    difference_interval,
    distribution,
    histogram,
    meets,
    parse_slo,
    percentile,
)


def test_percentiles_match_numpys_linear_method() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == pytest.approx(2.5)
    assert percentile(values, 90) == pytest.approx(3.7)
    assert percentile(values, 99) == pytest.approx(3.97)
    assert percentile([7.0], 99) == 7.0 and percentile([], 50) is None


def test_histogram_buckets_are_powers_of_two_of_ms() -> None:
    found = histogram([0.1, 0.125, 1.0, 1.9, 2.0, 1e12])
    assert found["low_ms"] == 0.125
    assert found["counts"] == {"0": 1, "1": 1, "4": 2, "5": 1, "29": 1}


def test_a_distribution_of_nothing_is_nulls() -> None:
    empty = distribution([])
    assert empty["n"] == 0 and empty["p50"] is None and empty["mean"] is None


def test_slo_parsing_refuses_what_it_cannot_read() -> None:
    assert parse_slo("ttft_ms=500, itl_ms=50") == {"ttft_ms": 500.0, "itl_ms": 50.0}
    assert parse_slo("") == {}
    for bad in ("ttft=5", "ttft_ms", "ttft_ms=x", "ttft_ms=-1", "ttft_ms=nan", "e2e_ms=inf"):
        with pytest.raises(ValueError):
            parse_slo(bad)


def test_goodput_needs_every_slo_and_a_known_figure() -> None:
    slo = {"ttft_ms": 500.0, "itl_ms": 50.0}
    assert meets({"ttft_ms": 400.0, "itl_mean_ms": 40.0}, slo)
    assert not meets({"ttft_ms": 600.0, "itl_mean_ms": 40.0}, slo)
    assert not meets({"ttft_ms": 400.0, "itl_mean_ms": None}, slo)  # one token: no ITL


def test_the_bootstrap_is_seeded_and_covers_a_shift() -> None:
    a = [float(i % 17) for i in range(200)]
    b = [x + 10.0 for x in a]
    span = difference_interval(a, b, 50, seed=1)
    assert span == difference_interval(a, b, 50, seed=1)
    assert span is not None and span[0] <= 10.0 <= span[1]
    one = bootstrap_interval(a, 50, seed=2)
    assert one is not None and one[0] <= percentile(a, 50) <= one[1]  # type: ignore[operator]
    assert difference_interval([1.0], b, 50) is None
