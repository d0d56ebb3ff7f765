"""The README's commands as a new user types them: --version, --help that hides nothing,
scripts/summary.py from the system Python, pi on the embedded model by default; the
reference answers `make run` replays beside SmolLM2; the errors a new user hits, each one
clear line; Ctrl-C during in-process generation without a traceback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import get_args

import pytest

from benchrig import __version__
from benchrig.cli import Format
from benchrig.execute.plan import default_provider
from benchrig.report import FORMATS
from tests.conftest import ROOT, TASKS, benchrig
from tests.helpers.result_sets import attempt, write

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
    assert default_provider("codex", None, ["smollm2"]) == "local"  # through the gateway
    assert default_provider("claude", "json", ["smollm2"]) == "json"


REFERENCES = TASKS / ".references"


def test_every_bundled_coding_task_has_a_reference_that_passes(results_dir: Path) -> None:
    coding = sorted(p.name.removesuffix(".test.py") for p in TASKS.glob("*.test.py"))
    assert coding and sorted(p.stem for p in REFERENCES.glob("*.md")) == coding
    ran = benchrig("run", "--suite", "coding", "-m", "reference", "-d", "replay", "-p",
                   str(REFERENCES), results_dir=results_dir)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert re.search(r"^reference\s+replay\s+\d+\s+100% ", ran.stdout, re.M), ran.stdout


def test_make_run_replays_the_references_and_installs_no_ray() -> None:
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = make.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "--model reference --driver replay" in recipe and "tasks/.references" in recipe
    assert "agents" not in recipe.splitlines()[0]  # pi comes with `make agents`
    installed = re.search(r"^\$\(STAMP\):.*?\n\n", make, re.M | re.S)
    assert installed and "ray" not in installed.group(0)
    assert re.search(r"^test:.*\blint\b", make, re.M) and re.search(r"^lint: dev", make, re.M)


def test_the_readme_replay_example_names_a_file_that_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"^scripts/run\.sh \S+ \S+ replay (\S+)", readme, re.M)
    assert examples and all((ROOT / path).exists() for path in examples), examples


def _task(folder: Path, name: str, frontmatter: str) -> None:
    (folder / f"{name}.md").write_text(f"---\n{frontmatter}---\n\nWhat time is it?\n")


def test_task_errors_a_new_user_hits_are_one_clear_line(tmp_path: Path) -> None:
    _task(tmp_path, "no-suite", "id: no-suite\ntitle: T\n")
    _task(tmp_path, "unquoted", "id: unquoted\nsuite: reasoning\nlanguage: en\n"
          "difficulty: easy\ntags: [x]\ntimeout_s: 60\nexpected: 11:20\n"
          "check:\n  type: final_answer\n")
    ran = benchrig("validate", str(tmp_path / "no-suite.md"), results_dir=tmp_path)
    assert ran.code == 2
    assert ran.stderr.strip().splitlines() == [
        f"{tmp_path / 'no-suite.md'}: suite: required field is missing"]
    ran = benchrig("validate", str(tmp_path / "unquoted.md"), results_dir=tmp_path)
    assert ran.code == 2
    assert ran.stderr.strip().splitlines() == [
        f"{tmp_path / 'unquoted.md'}: expected: 11:20 is read by YAML as the number 680 "
        '(base 60); quote it: "11:20"']


def test_one_bad_task_file_hides_no_other_task_from_list(tmp_path: Path) -> None:
    for name in ("bat-and-ball", "lru-cache"):
        (tmp_path / f"{name}.md").write_text((TASKS / f"{name}.md").read_text())
    (tmp_path / "lru-cache.test.py").write_text((TASKS / "lru-cache.test.py").read_text())
    _task(tmp_path, "broken", "id: broken\ntitle: T\n")
    ran = benchrig("list", results_dir=tmp_path, env={"BENCHRIG_TASKS_DIR": str(tmp_path)})
    assert ran.code == 2
    listed = [line.split()[1] for line in ran.stdout.splitlines()[:2]]
    assert listed == ["bat-and-ball", "lru-cache"], ran.stdout
    assert "broken.md: suite: required field is missing" in ran.stderr
    assert "drivers:" in ran.stdout


def test_summary_by_task_fits_120_columns(tmp_path: Path) -> None:
    models = [f"organisation/a-rather-long-model-name-{i}-instruct-q4_k_m" for i in range(9)]
    folder = write(tmp_path / "results", [attempt(m, t, "pass" if i % 2 else "fail")
                                          for i, m in enumerate(models)
                                          for t in ("t1", "t2")])
    ran = benchrig("summary", "--by", "task", str(folder), results_dir=folder)
    assert ran.code == 0, ran.stderr
    assert max(len(line) for line in ran.stdout.splitlines()) <= 120, ran.stdout
    for model in models:  # every row still named, in the legend
        assert model in ran.stdout


@pytest.mark.model
def test_ctrl_c_during_in_process_generation_prints_no_traceback(results_dir: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "benchrig.cli", "run", "lru-cache", "-m", "smollm2",
         "--results-dir", str(results_dir)], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stderr is not None
    seen = ""
    while "generating" not in seen:  # Ctrl-C only once llama.cpp is decoding
        piece = child.stderr.read(1)
        assert piece, seen
        seen += piece
    time.sleep(1.0)  # well inside the decode: the abort callback runs every few ms
    child.send_signal(signal.SIGINT)
    rest = child.communicate(timeout=60)[1]
    assert child.returncode == 130, seen + rest
    assert "Traceback" not in rest and "Exception ignored" not in rest, rest
    assert "interrupted after 0/1" in rest
