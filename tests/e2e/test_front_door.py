"""The README's commands as a new user types them: --version, --help that hides nothing,
scripts/summary.py from the system Python, pi on the embedded model by default."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from benchrig import __version__
from benchrig.cli import Format
from benchrig.execute.plan import default_provider
from benchrig.report import FORMATS
from tests.conftest import ROOT, benchrig

pytestmark = pytest.mark.slow


def test_version(results_dir: Path) -> None:
    ran = benchrig("--version", results_dir=results_dir)
    assert (ran.code, ran.stdout) == (0, f"benchrig {__version__}\n")


def test_run_help_names_every_option_in_full_with_its_default(results_dir: Path) -> None:
    ran = benchrig("run", "--help", results_dir=results_dir, env={"COLUMNS": "80"})
    assert ran.code == 0, ran.stderr
    assert "…" not in ran.stdout  # rich's boxes cut long option names at 80 columns
    entries = re.split(r"\n  (?=-)", ran.stdout.split("Options:", 1)[1])[1:]
    names = [entry.split()[0].rstrip(",") for entry in entries]
    assert "--require-isolation" in names and "--jobs" in " ".join(entries)
    # off unless given, or repeatable: no default
    flags = ("--require-isolation", "--retry-errors", "--resume", "--help", "--pass-env",
             "--label", "--suite", "--pack", "--dry-run", "--allow-identical")
    for entry in entries:
        if not any(flag in entry.split()[:3] for flag in flags):
            assert "default" in entry, entry


def test_format_is_a_choice_of_the_reports_formats(results_dir: Path) -> None:
    assert get_args(Format) == FORMATS
    ran = benchrig("summary", "--help", results_dir=results_dir)
    assert "<table|markdown|csv|json>" in ran.stdout.replace(" ", "")
    bad = benchrig("summary", "--format", "xml", results_dir=results_dir)
    assert bad.code == 2 and "'xml' is not one of" in bad.stderr


def test_summary_script_runs_from_the_system_python(results_dir: Path) -> None:
    """The system Python has no typer: the script runs itself again under .venv."""
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv in this checkout")
    system = Path(sys.base_prefix) / "bin" / "python3"
    probe = subprocess.run([system, "-c", "import typer"], capture_output=True, check=False)
    if probe.returncode == 0:
        pytest.skip(f"{system} has typer: nothing to prove here")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    (results_dir / "r.json").write_text((ROOT / "results" / "EXAMPLE.json").read_text())
    ran = subprocess.run([system, ROOT / "scripts" / "summary.py", results_dir],
                         capture_output=True, text=True, env=env, check=False, cwd="/")
    assert ran.returncode == 0, ran.stderr
    assert "oracle" in ran.stdout


def test_pi_on_an_embedded_model_gets_provider_local() -> None:
    assert default_provider("pi", None, ["smollm2"]) == "local"
    assert default_provider("pi", None, ["/models/x.gguf"]) == "local"
    assert default_provider("pi", "zai", ["smollm2"]) == "zai"
    assert default_provider("pi", None, ["glm-4.6"]) is None
    assert default_provider("pi", None, ["smollm2", "glm-4.6"]) is None
    assert default_provider("llamacpp", None, ["smollm2"]) is None
    assert default_provider("codex", None, ["smollm2"]) is None
