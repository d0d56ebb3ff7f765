"""Isolation through the CLI: recorded in every result, warned about once, required on demand."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from benchrig import sandbox
from tests.conftest import SOLUTIONS, WITHOUT_BUBBLEWRAP, answer_file, benchrig, fenced

GOOD = (SOLUTIONS / "lru-cache.py").read_text()
FULL = sandbox.detect().level == sandbox.FULL


def results(results_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(p.read_text()) for p in sorted(results_dir.glob("*.json"))]


def test_require_isolation_refuses_to_run_degraded(tmp_path: Path, results_dir: Path) -> None:
    answer = answer_file(tmp_path, fenced(GOOD))
    ran = benchrig("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(answer),
                   "--require-isolation", results_dir=results_dir,
                   command=WITHOUT_BUBBLEWRAP)
    assert ran.code == 2, ran.stderr
    assert "--require-isolation" in ran.stderr and "bubblewrap is not installed" in ran.stderr
    assert results(results_dir) == []


def test_degraded_runs_warn_once_and_say_so_in_every_result(tmp_path: Path,
                                                            results_dir: Path) -> None:
    answer = answer_file(tmp_path, fenced(GOOD))
    ran = benchrig("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(answer),
                   "--runs", "2", results_dir=results_dir, command=WITHOUT_BUBBLEWRAP)
    assert ran.code == 0, ran.stderr
    assert ran.stderr.count("sandbox isolation is degraded") == 1
    found = results(results_dir)
    assert len(found) == 2
    for result in found:
        assert result["result"] == "pass" and result["isolation"] == "degraded"
        sandbox = result["evidence"]["sandbox"]
        assert sandbox["namespaces"] is False and sandbox["cleanup"] == "verified"
        assert any("bubblewrap" in reason for reason in sandbox["reasons"])


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="full isolation is not available on this machine")
def test_full_isolation_runs_quietly_and_keeps_secrets_out_of_results(
        tmp_path: Path, results_dir: Path) -> None:
    secret = f"SECRET-{secrets.token_hex(8)}"
    snoop = ("import os\nprint(dict(os.environ))\n"
             "for pid in os.listdir('/proc'):\n"
             "    try:\n        print(open(f'/proc/{pid}/environ').read())\n"
             "    except OSError:\n        pass\n" + GOOD)
    answer = answer_file(tmp_path, fenced(snoop))
    ran = benchrig("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(answer),
                   "--require-isolation", results_dir=results_dir,
                   env={"BENCHRIG_TEST_API_KEY": secret})
    assert ran.code == 0, ran.stderr
    assert "isolation is" not in ran.stderr
    (result,) = results(results_dir)
    assert result["isolation"] == "full" and result["result"] == "pass"
    assert "HOME" in result["evidence"]["stdout"]  # it did print its environment…
    for written in results_dir.iterdir():  # …and no file BenchRig wrote holds the secret
        assert secret not in written.read_text()
    assert secret not in ran.stdout + ran.stderr
