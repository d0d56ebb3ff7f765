"""The load views: curves, knee and frontier from results, and outside names made printable."""

from __future__ import annotations

from typing import Any

from benchrig.report.load import curves, html_curves, render_compare, render_curves


def level(c: int, rps: float, p99: float, model: str = "m", run_label: str = "",
          started: str = "2026-12-01T00:00:00Z") -> dict[str, Any]:
    dist = {"n": 4, "mean": 1.0, "p50": p99 / 2, "p90": p99, "p99": p99,
            "histogram": {"low_ms": 0.125, "counts": {}}}
    return {"suite": "load", "task": "t", "model": model, "driver": "openai",
            "provider": "http://x/v1", "label": run_label, "started_at": started,
            "evidence": {"load": {"mode": "concurrency", "concurrency": c, "rate": None,
                                  "requests": 4, "errors": 0, "request_throughput": rps,
                                  "output_tokens_per_s": rps * 10, "ttft_ms": dist,
                                  "itl_ms": dist, "e2e_ms": dist, "goodput": None,
                                  "samples": {"ttft_ms": [p99 / 2, p99] * 4}}}}


def test_the_knee_is_the_first_level_near_the_best_throughput() -> None:
    found = curves([level(1, 1.0, 10), level(2, 2.0, 11), level(4, 3.7, 20),
                    level(8, 4.0, 80), level(16, 4.0, 200)])
    curve, = found
    assert [p.level for p in curve.points] == [1, 2, 4, 8, 16]
    assert curve.knee() == 4
    # 16 has no more tok/s than 8 and a higher p99: off the frontier
    assert curve.frontier() == {1, 2, 4, 8}


def test_a_level_measured_twice_shows_its_latest() -> None:
    old, new = level(1, 1.0, 10), level(1, 2.0, 10, started="2026-12-02T00:00:00Z")
    curve, = curves([new, old])
    assert curve.points[0].req_per_s == 2.0


def test_outside_names_are_printable_in_text_and_html() -> None:
    hostile = "m\x1b[2J\u202eevil\nline"
    results = [level(1, 1.0, 10, model=hostile), level(2, 2.0, 12, model=hostile)]
    text = render_curves(results)
    assert "\x1b" not in text and "\u202e" not in text and "evil⏎line" in text
    assert "\x1b" not in html_curves(results)[0]["name"]


def test_hostile_figures_are_unknown_not_a_crash() -> None:
    bad = level(1, 1.0, 10)
    bad["evidence"]["load"]["request_throughput"] = "fast"
    bad["evidence"]["load"]["ttft_ms"] = {"p50": float("nan"), "p99": [1]}
    bad["evidence"]["load"]["samples"] = {"ttft_ms": ["x", 1.0, float("inf")]}
    curve, = curves([bad])
    point = curve.points[0]
    assert point.req_per_s is None and point.ttft_p50 is None and point.ttft_p99 is None
    assert list(point.samples["ttft_ms"]) == [1.0]
    assert "—" in render_curves([bad])


def test_compare_gives_an_interval_per_level() -> None:
    a = [level(1, 1.0, 10, run_label="a"), level(2, 2.0, 12, run_label="a")]
    b = [level(1, 1.0, 20, run_label="b"), level(2, 2.0, 24, run_label="b")]
    text = render_compare(a, b, ("a", "b"))
    assert "TTFT p50 +7.5" in text and "1:" in text and "2:" in text
