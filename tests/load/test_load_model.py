"""One short real run: `benchrig run --suite load` against `benchrig serve` on the embedded
model, the command the issue names, from the command line to the curves."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchrig.resultio.files import load_results
from tests.conftest import ROOT, benchrig

pytestmark = pytest.mark.model


def test_a_load_sweep_against_benchrig_serve(results_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "serve", "--context-size",
                             "2048", "--threads", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        ran = benchrig("run", "--suite", "load", "--driver", "openai", "--provider", url,
                       "--concurrency", "1,2", "--requests", "2", "--warmup", "1",
                       "--max-tokens", "8", "--slo", "ttft_ms=60000",
                       results_dir=results_dir)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert ran.code == 0, ran.stderr
    results = load_results([results_dir]).results
    assert sorted(r["evidence"]["load"]["concurrency"] for r in results) == [1, 2]
    for r in results:
        load = r["evidence"]["load"]
        assert load["completed"] == 2 and load["errors"] == 0
        assert load["output_tokens_source"] == "server" and 0 < load["output_tokens"] <= 16
        assert load["ttft_ms"]["p50"] > 0 and load["goodput"]["requests"] == 2
    assert "Load · load-chat-short · smollm2" in ran.stdout
