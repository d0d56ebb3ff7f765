"""The load views: curves, knee and frontier from results, and outside names made printable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchrig.report.load_curves import (
    curves,
    html_curves,
    render_compare,
    render_curves,
    samples_of,
)
from benchrig.resultio.files import load_records
from benchrig.resultio.record import from_json
from tests.helpers.result_sets import attempt, write


def level(c: int, rps: float, p99: float, model: str = "m", run_label: str = "",
          started: str = "2026-12-01T00:00:00Z") -> dict[str, Any]:
    dist = {"n": 4, "mean": 1.0, "p50": p99 / 2, "p90": p99, "p99": p99,
            "histogram": {"low_ms": 0.125, "counts": {}}}
    r = attempt(model, "t", "no-test", suite="load", agent="openai", started=started,
                label=run_label or None, provider="http://x/v1",
                run_id=f"{c:06d}{abs(hash((model, run_label, started))) % 10**6:06d}")
    r["evidence"] = {"load": {"sweep_id": "0" * 12, "index": 0, "arrivals": None, "seed": 0,
                              "completed": 4, "duration_s": 1.0, "tokens_per_s": dist,
                              "warmup": {"requests": 0, "errors": 0},
                              "mode": "concurrency", "concurrency": c, "rate": None,
                              "requests": 4, "errors": 0, "request_throughput": rps,
                              "output_tokens_per_s": rps * 10, "ttft_ms": dist,
                              "itl_ms": dist, "e2e_ms": dist, "goodput": None,
                              "samples": {"ttft_ms": [p99 / 2, p99] * 4}}}
    return r


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
    curve, = curves([from_json(bad)])  # as a caller's record: the schema is not asked
    point = curve.points[0]
    assert point.req_per_s is None and point.ttft_p50 is None and point.ttft_p99 is None
    assert "—" in render_curves([from_json(bad)])


def test_a_record_leaves_the_raw_samples_in_the_file(tmp_path: Path) -> None:
    """Summary over many levels holds their figures, not their thousands of samples each:
    compare reads a level's samples back from its file when it needs them."""
    write(tmp_path, [level(1, 1.0, 10)])
    record, = load_records([tmp_path]).records
    assert "samples" not in (record.evidence or {})["load"]
    point, = curves([record])[0].points
    assert samples_of(point) == {"ttft_ms": [5.0, 10.0] * 4}


def test_compare_gives_an_interval_per_level(tmp_path: Path) -> None:
    write(tmp_path / "a", [level(1, 1.0, 10, run_label="a"), level(2, 2.0, 12, run_label="a")])
    write(tmp_path / "b", [level(1, 1.0, 20, run_label="b"), level(2, 2.0, 24, run_label="b")])
    a, b = (load_records([tmp_path / side]).records for side in "ab")
    text = render_compare(a, b, ("a", "b"))
    assert "TTFT p50 +7.5" in text and "1:" in text and "2:" in text


def test_a_load_level_is_not_a_pass_fail_attempt() -> None:
    """A load level is a measured distribution (result no-test, checks 0/0): it once became a
    scorecard line `load — (0/0) · avg TTFT 0.03 s` and two more "attempts" of the model.
    Levels stay out of every group, rate and count, and are shown in their own section."""
    from benchrig.report import render

    answered = [attempt("m", "t1", "pass", agent="openai"),
                attempt("m", "t2", "fail", agent="openai")]
    levels = [level(1, 1.0, 10), level(2, 2.0, 12)]
    text = render([*answered, *levels], "table")
    cards = text.split("Scorecards")[1].split("Load ·")[0]
    assert "load" not in cards and "(0/0)" not in cards
    assert render([*answered, *levels], "table", table_only=True) == \
        render(answered, "table", table_only=True)  # 2 attempts, not 4
    assert "Load · t · m · openai" in text
    by_task = render([*answered, *levels], "table", by="task")
    assert by_task == render(answered, "table", by="task")
    only_levels = render(levels, "table")  # a folder of load results alone: its curves
    assert "Load · t" in only_levels and "(0/0)" not in only_levels


def test_the_json_summary_has_its_load_section_apart() -> None:
    """`summary --format json` over load levels alone was `"models": []`: the levels were
    lost. They are a section of their own, never among the models' attempts."""
    import json

    from benchrig.report import render

    answered = [attempt("m", "t1", "pass", agent="openai")]
    found = json.loads(render([*answered, level(1, 1.0, 10), level(2, 2.0, 12)], "json"))
    assert found["results"] == 1 and found["models"][0]["attempts"] == 1
    curve, = found["load"]
    assert (curve["task"], curve["model"], curve["mode"]) == ("t", "m", "concurrency")
    assert [lv["level"] for lv in curve["levels"]] == [1, 2]
    assert curve["levels"][1]["ttft_ms"] == {"p50": 6.0, "p99": 12.0}


def test_the_markdown_report_has_its_load_section_and_no_markup_from_names() -> None:
    from benchrig.report import render

    hostile = "m|x](http://evil)"
    text = render([level(1, 1.0, 10, model=hostile), level(2, 2.0, 12, model=hostile)],
                  "markdown")
    assert text.startswith("## Load") and "Per-model table" not in text
    assert "m\\|x\\]" in text and "](http://evil)" not in text.replace("\\]", "")
    assert text.count("\n| 1 ") + text.count("\n| 2 ") == 2


def test_the_per_attempt_csv_lists_attempts_not_levels() -> None:
    from benchrig.report import render

    answered = [attempt("m", "t1", "pass", agent="openai")]
    both = render([*answered, level(1, 1.0, 10)], "csv", per_attempt=True)
    assert both == render(answered, "csv", per_attempt=True)


def test_the_csv_summary_has_the_load_levels_and_no_formula_from_names() -> None:
    """`summary --format csv` over load levels was the models' header alone: the levels
    were lost. They are their own table (one row per level, knee and frontier marked),
    alone for levels only, after a blank line beside attempts; names cannot start a
    formula or carry control characters."""
    import csv
    import io

    from benchrig.report import render

    hostile = "=HYPERLINK(\"http://evil\")\x1b[2J"
    levels = [level(1, 1.0, 10, model=hostile), level(2, 2.0, 12, model=hostile),
              level(4, 3.9, 20, model=hostile)]
    levels[2]["evidence"]["load"]["goodput"] = {"slo": {"ttft_ms": 500.0, "itl_ms": 50},
                                                "requests": 3, "share": 0.75, "per_s": 3.0}
    rows = list(csv.DictReader(io.StringIO(render(levels, "csv"))))
    assert [r["level"] for r in rows] == ["1", "2", "4"]
    assert rows[0]["model"].startswith("'=") and "\x1b" not in rows[0]["model"]
    assert rows[1]["ttft_p99_ms"] == "12.000" and rows[1]["request_throughput"] == "2.000"
    assert rows[2]["knee"] == "true" and rows[2]["frontier"] == "true"
    assert rows[2]["goodput_share"] == "0.750" and rows[2]["goodput_slo"] == "itl_ms≤50 ttft_ms≤500"
    answered = [attempt("m", "t1", "pass", agent="openai")]
    both = render([*answered, *levels], "csv")
    models, load = both.split("\n\n")
    assert models + "\n" == render(answered, "csv")
    assert [r["level"] for r in csv.DictReader(io.StringIO(load))] == ["1", "2", "4"]


def test_every_summary_names_the_slos_goodput_counts_against() -> None:
    import json

    from benchrig.report import render

    levels = [level(1, 1.0, 10), level(2, 2.0, 12)]
    for lv in levels:
        lv["evidence"]["load"]["goodput"] = {"slo": {"ttft_ms\x1b[2J": 500.0}, "requests": 4,
                                             "share": 1.0, "per_s": 1.0}
    text = render(levels, "table")
    assert "goodput: the share of requests meeting ttft_ms\\x1b[2J≤500" in text
    assert "\x1b" not in text
    markdown = render(levels, "markdown")
    assert "meeting ttft" in markdown and "\x1b" not in markdown
    curve, = json.loads(render(levels, "json"))["load"]
    assert curve["levels"][0]["goodput_slo"] == "ttft_ms\\x1b[2J≤500"


def test_a_levels_drill_down_shows_figures_not_its_raw_samples() -> None:
    """A level's 4 × 4,000 raw samples filled the drill-down's evidence cap before any
    figure; hostile figures (text, NaN) show as —, never as what the file wrote."""
    from benchrig.report.viewer import detail, payload

    lv = level(1, 1.0, 10)
    lv["evidence"]["load"]["samples"] = {"ttft_ms": [1.0] * 4000}
    lv["evidence"]["load"]["request_throughput"] = "<b>fast</b>"
    lv["evidence"]["load"]["ttft_ms"]["p99"] = float("nan")
    found = detail(lv)
    assert "samples" not in found["evidence"] and '"requests"' in found["evidence"]
    facts = dict(found["load"]["facts"])
    assert facts["request throughput (req/s)"] == "—" and facts["level"] == "concurrency 1"
    assert found["load"]["figures"][0] == ["TTFT ms", "4", "5", "10", "—", "1"]
    assert detail(attempt("m", "t", "pass"))["load"] is None
    curve, = payload([from_json(lv), from_json(level(2, 2.0, 12))], False)["load"]
    assert curve["members"] == [0, 1] and curve["rows"][1][0] == "2"


def _two_sides(tmp_path: Path) -> Path:
    sides = []
    for name, scale in (("a", 1.0), ("b", 2.0)):
        levels = [level(c, rps * scale, p99 * scale, run_label=name)
                  for c, rps, p99 in ((1, 1.0, 10.0), (2, 2.0, 12.0))]
        for lv in levels:
            lv["evidence"]["load"]["goodput"] = {"slo": {"ttft_ms": 500}, "requests": 2,
                                                 "share": 0.5 * scale, "per_s": 1.0}
        sides += levels
    return write(tmp_path / "r", sides)


def test_compare_shows_each_sides_throughput_and_goodput(tmp_path: Path) -> None:
    """`compare` showed only latency shifts: the curve's other half (request and token
    throughput, goodput against its SLOs) was in no comparison of two runtimes."""
    from tests.conftest import benchrig

    folder = _two_sides(tmp_path)
    ran = benchrig("compare", "a", "b", str(folder), results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    assert "TTFT p50 +7.5" in ran.stdout
    assert "req/s 2.00 → 4.00 · tok/s 20.00 → 40.00 · goodput 50% → 100% " \
           "(ttft_ms≤500 / ttft_ms≤500)" in ran.stdout


def test_compare_json_has_the_load_levels(tmp_path: Path) -> None:
    """`compare --format json` over load levels gave only the attempts' (none): the levels
    were lost. They are a `load` key: per shared level each side and each percentile."""
    import json

    from tests.conftest import benchrig

    folder = _two_sides(tmp_path)
    ran = benchrig("compare", "a", "b", str(folder), "--format", "json",
                   results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    curve, = json.loads(ran.stdout)["load"]
    assert (curve["task"], curve["mode"]) == ("t", "concurrency")
    one, two = curve["levels"]
    assert two["a"]["request_throughput"] == 2.0 and two["b"]["goodput_share"] == 1.0
    ttft50 = next(p for p in one["percentiles"] if (p["figure"], p["q"]) == ("ttft_ms", 50))
    assert ttft50["difference"] == 7.5 and len(ttft50["interval"]) == 2
