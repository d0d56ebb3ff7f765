"""`benchrig run`: usage errors found before any model is called (one line, exit 2)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchrig.suites import SUITES
from tests.conftest import ROOT, SOLUTIONS, benchrig, fenced
from tests.loopback import Loopback, Reply

GOOD = fenced((SOLUTIONS / "lru-cache.py").read_text())


def _one_line_usage_error(ran: Any) -> str:
    assert ran.code == 2, ran.stderr
    assert "Traceback" not in ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, ran.stderr
    return str(lines[0])


def test_an_unknown_suite_is_named_with_the_suites(results_dir: Path) -> None:
    ran = benchrig("run", "--suite", "contxt", "-d", "replay", "-p", "x",
                   results_dir=results_dir)
    line = _one_line_usage_error(ran)
    assert f"contxt is not a suite; suites: {', '.join(SUITES)}" in line


def test_a_results_path_that_is_a_file_stops_before_the_model_is_asked(
        tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    with Loopback({("POST", "/v1/chat/completions"): Reply.json({}, 500)}) as server:
        ran = benchrig("run", "lru-cache", "-m", "m", "-d", "openai", "-p",
                       f"{server.url}/v1", results_dir=blocker)
        assert server.requests == []  # the model was never called
    assert "is a file, not a folder" in _one_line_usage_error(ran)


def test_a_read_only_results_folder_stops_before_the_model_is_asked(tmp_path: Path) -> None:
    """A real read-only mount (we are root: permission bits would not stop us)."""
    folder = tmp_path / "results"
    folder.mkdir()
    answer = tmp_path / "answer.md"
    answer.write_text(GOOD)
    cli = shlex.join([sys.executable, "-m", "benchrig.cli", "run", "lru-cache", "-m", "m",
                      "-d", "replay", "-p", str(answer), "--results-dir", str(folder)])
    mount = shlex.join(["mount", "--bind", "-o", "ro", str(folder), str(folder)])
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("no mount namespace here")
    ran = subprocess.run(["unshare", "-m", "sh", "-c", f"{mount} && {cli}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 2, ran.stderr
    assert "Traceback" not in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr
    assert f"cannot write results to {folder}" in ran.stderr
    assert list(folder.iterdir()) == []
