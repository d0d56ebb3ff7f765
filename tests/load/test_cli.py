"""`benchrig run --suite load` end to end against the paced stand-in: one schema-valid result
per level, the curves in run's output and in summary, and a dead server as counted errors."""

from __future__ import annotations

import json
from pathlib import Path

from benchrig.local.embedded_server import free_port
from benchrig.resultio.files import load_results
from tests.conftest import cli_call
from tests.helpers.paced import paced


def test_a_concurrency_sweep_writes_one_result_per_level(results_dir: Path) -> None:
    with paced(0.02, tokens=16) as url:
        ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider", url,
                       "--concurrency", "1,2,4", "--requests", "4", "--warmup", "1",
                       "--max-tokens", "16", "--slo", "ttft_ms=10000,itl_ms=10000",
                       results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    loaded = load_results([results_dir])
    assert not loaded.rejected and len(loaded.results) == 3
    levels = sorted(r["evidence"]["load"]["concurrency"] for r in loaded.results)
    assert levels == [1, 2, 4]
    for r in loaded.results:
        load = r["evidence"]["load"]
        assert r["suite"] == "load" and r["result"] == "no-test"
        assert load["completed"] == 4 and load["errors"] == 0
        assert load["warmup"]["requests"] == 1
        assert load["output_tokens"] == 64 and load["output_tokens_source"] == "server"
        assert load["goodput"]["requests"] == 4 and load["goodput"]["share"] == 1.0
        assert load["ttft_ms"]["p50"] >= 20.0  # the stand-in's delay: no earlier byte
    assert len({r["evidence"]["load"]["sweep_id"] for r in loaded.results}) == 1
    assert "Load · load-chat-short" in ran.stdout and "TTFT p99" in ran.stdout
    summary = cli_call("summary", str(results_dir), results_dir=results_dir)
    assert summary.code == 0 and "Load · load-chat-short" in summary.stdout


def test_a_rate_sweep_records_its_arrivals(results_dir: Path) -> None:
    with paced(0.01, tokens=4) as url:
        ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider", url,
                       "--rate", "20,40", "--arrivals", "poisson", "--seed", "3",
                       "--requests", "5", "--warmup", "0", "--max-tokens", "4",
                       results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    results = load_results([results_dir]).results
    assert sorted(r["evidence"]["load"]["rate"] for r in results) == [20.0, 40.0]
    assert {r["evidence"]["load"]["arrivals"] for r in results} == {"poisson"}
    assert "by rate" in ran.stdout


def test_a_dead_server_is_an_error_result_not_a_traceback(results_dir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider", url,
                   "--concurrency", "1,2", "--requests", "2", results_dir=results_dir)
    assert ran.code == 1 and "Traceback" not in ran.stderr
    results = load_results([results_dir]).results
    assert len(results) == 1  # the sweep stops after a level where nothing completed
    load = results[0]["evidence"]["load"]
    assert results[0]["result"] == "error" and results[0]["error"]["kind"] == "infra"
    assert load["errors"] == 2 and load["error_kinds"] == {"connect": 2}


def test_bad_sweep_options_are_usage_errors(results_dir: Path) -> None:
    for args in (("--concurrency", "1,x"), ("--concurrency", "1", "--rate", "2"),
                 ("--slo", "ttft=5"), ("--slo", "ttft_ms=-1"), ("--runs", "2"),
                 ("--resume",), ("--dry-run",), ("--jobs", "4")):
        ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider",
                       "http://127.0.0.1:9/v1", *args, results_dir=results_dir)
        assert ran.code == 2 and "Traceback" not in ran.stderr, (args, ran.stderr)
    assert not list(results_dir.iterdir())


def test_old_results_stay_valid() -> None:
    example = Path(__file__).resolve().parents[2] / "results" / "EXAMPLE.json"
    from benchrig.schemas import problems

    assert problems("result", json.loads(example.read_text())) == []


def test_ctrl_c_keeps_every_finished_level(results_dir: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT

    # A suite started as a background job inherits SIGINT ignored, and so would the child
    # (it then ran all 50 levels and exited 0): handled here, it is the default after exec.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    with paced(0.1, tokens=4) as url:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchrig.cli", "run", "--suite", "load", "--driver",
                 "openai", "--provider", url, "--concurrency", ",".join(["1"] * 50),
                 "--requests", "3", "--warmup", "0", "--results-dir", str(results_dir)],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ})
        finally:
            signal.signal(signal.SIGINT, previous)
        assert proc.stdout is not None
        proc.stdout.readline()  # the first level's line: its result is written
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    loaded = load_results([results_dir])
    assert not loaded.rejected and 1 <= len(loaded.results) < 50
    assert not [p for p in results_dir.iterdir() if p.name.endswith(".tmp")]
    assert "every finished level is recorded" in err


def test_a_saturation_sweep_stops_when_throughput_stops_growing(results_dir: Path) -> None:
    """The stand-in answers every stream at once, so throughput grows with concurrency up to
    the cap given; a one-slot server is tested by the saturated() rule directly."""
    from benchrig.load.sweep_plan import saturated

    assert saturated([1.0, 1.05], 0.0) and not saturated([1.0, 1.9], 0.0)
    assert saturated([1.0], 0.6) and not saturated([1.0], 0.0)
    with paced(0.01, tokens=4) as url:
        ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider", url,
                       "--saturation", "--concurrency", "4", "--requests", "8",
                       "--warmup", "0", "--max-tokens", "4", results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    levels = sorted(r["evidence"]["load"]["concurrency"]
                    for r in load_results([results_dir]).results)
    assert levels[0] == 1 and set(levels) <= {1, 2, 4}


def test_the_api_key_is_sent_and_never_recorded(results_dir: Path) -> None:
    from tests.helpers.loopback import Loopback, Reply, sse

    chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
    reply = Reply(sse(chunk, chunk, "[DONE]"), content_type="text/event-stream")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider",
                       server.url + "/v1", "--concurrency", "1", "--requests", "2",
                       "--warmup", "0", results_dir=results_dir,
                       env={"OPENAI_API_KEY": "sk-load-secret"})
        sent = [h.get("authorization") for h in server.headers]
    assert ran.code == 0, ran.stderr
    # the two requests, and the GET of /v1/benchrig/server before them (as the openai driver)
    assert sent == ["Bearer sk-load-secret"] * 3
    for path in results_dir.iterdir():
        assert "sk-load-secret" not in path.read_text()
    result, = load_results([results_dir]).results
    assert result["evidence"]["load"]["output_tokens_source"] == "counted"


def test_a_load_task_named_by_id_runs_as_a_sweep(results_dir: Path) -> None:
    """Named without --suite load, a load task once ran as one plain chat attempt: a result
    of suite load with no evidence.load, which the curves cannot read."""
    with paced(0.01, tokens=4) as url:
        ran = cli_call("run", "load-chat-short", "--driver", "openai", "--provider", url,
                       "--concurrency", "2", "--requests", "2", "--warmup", "0",
                       "--max-tokens", "4", results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    result, = load_results([results_dir]).results
    assert result["evidence"]["load"]["concurrency"] == 2
    mixed = cli_call("run", "load-chat-short", "bat-and-ball", "--driver", "openai",
                     "--provider", "http://127.0.0.1:9/v1", results_dir=results_dir)
    assert mixed.code == 2 and "load tasks only" in mixed.stderr


def test_compare_shows_the_levels_side_by_side(results_dir: Path) -> None:
    with paced(0.01, tokens=4) as url:
        for name in ("one", "two"):
            ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider", url,
                           "--concurrency", "1,2", "--requests", "4", "--warmup", "0",
                           "--max-tokens", "4", "--label", name, results_dir=results_dir)
            assert ran.code == 0, ran.stderr
    compared = cli_call("compare", "one", "two", str(results_dir), results_dir=results_dir)
    assert compared.code == 0, compared.stderr
    assert "Load · load-chat-short · by concurrency: two − one" in compared.stdout
    assert "  1: TTFT p50 " in compared.stdout and "  2: TTFT p50 " in compared.stdout
    html = results_dir.parent / "report.html"
    made = cli_call("report", str(results_dir), "--html", str(html), results_dir=results_dir)
    assert made.code == 0 and 'data-chart="load"' in html.read_text()


def test_the_runtime_version_is_what_the_server_reports(results_dir: Path) -> None:
    """benchrig serve names its runtime at /v1/benchrig/server: each level records it (it was
    null). Its text is outside input, printable; a server without the route is null with
    the reason."""
    info = {"server": "llama-cpp-python", "version": "0.3.16\x1b[2J\u202e"}
    gateway = {"server": "benchrig gateway", "runtime": "llama-cpp-python", "version": "0.3.36"}
    for given, folder in ((info, results_dir / "served"), (None, results_dir / "plain"),
                          (gateway, results_dir / "gateway")):
        with paced(0.0, tokens=4, server_info=given) as url:
            ran = cli_call("run", "--suite", "load", "--driver", "openai", "--provider", url,
                           "--concurrency", "1", "--requests", "2", "--warmup", "0",
                           "--max-tokens", "4", results_dir=folder)
        assert ran.code == 0, ran.stderr
    served, = load_results([results_dir / "served"]).results
    runtime = served["environment"]["runtime"]
    assert runtime["name"] == "llama-cpp-python" and runtime["version"].startswith("0.3.16")
    assert "\x1b" not in runtime["version"] and "\u202e" not in runtime["version"]
    plain, = load_results([results_dir / "plain"]).results
    runtime = plain["environment"]["runtime"]
    assert runtime["version"] is None and "benchrig/server" in runtime["version_reason"]
    behind, = load_results([results_dir / "gateway"]).results
    assert behind["environment"]["runtime"] == {"name": "llama-cpp-python", "version": "0.3.36",
                                                "served_by": "benchrig gateway"}


def test_compare_pairs_no_level_as_an_attempt(results_dir: Path) -> None:
    """Two labels' load levels once made a pass-rate pair ("load: no verdicts to compare")
    and a TTFT ratio of level means beside the per-level intervals: only the load section."""
    from tests.helpers.result_sets import attempt, write
    from tests.load.test_load_report import level

    write(results_dir, [level(1, 1.0, 10, run_label="one"), level(2, 2.0, 12, run_label="one"),
                        level(1, 1.0, 20, run_label="two"), level(2, 2.0, 24, run_label="two")])
    compared = cli_call("compare", "one", "two", str(results_dir), results_dir=results_dir)
    assert compared.code == 0, compared.stderr
    assert "pass rate" not in compared.stdout and "TTFT A ÷ B" not in compared.stdout
    assert "Load · t · by concurrency: two − one" in compared.stdout
    # beside answered tasks, the pairs are the answered tasks' alone
    write(results_dir, [attempt("m", "q", "pass", label="one"),
                        attempt("m", "q", "fail", label="two", started="2026-11-30T11:00:00Z")])
    compared = cli_call("compare", "one", "two", str(results_dir), results_dir=results_dir)
    assert compared.code == 0, compared.stderr
    assert "A = one: 1 results" in compared.stdout and "load:" not in compared.stdout
    assert "Load · t · by concurrency: two − one" in compared.stdout
