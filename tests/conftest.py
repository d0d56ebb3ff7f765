"""Shared fixtures: the repository's paths and a CLI runner that keeps stdout and stderr apart."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.schema_agreement import disagreement, result_files

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "tasks"
SOLUTIONS = Path(__file__).resolve().parent / "fixtures" / "solutions"


# What the fixture agents (tests/fixtures/agents/) read from their environment: agents get only an
# allow-list, so every test passes these on as a user would with --pass-env.
FIXTURE_VARIABLES = ("FAKE_AGENT_SCENARIO", "FAKE_AGENT_LOG", "FAKE_AGENT_FILES",
                     "FAKE_AGENT_PROBE", "FAKE_AGENT_MARKER")


@pytest.fixture(autouse=True)
def _result_files_validate_alike(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every result file a test leaves in its tmp_path, valid or not, is judged alike by the
    compiled schema validator and by jsonschema (benchrig/schemas.py)."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    folder: Path = request.getfixturevalue("tmp_path")  # set up first, so torn down after
    yield
    found = [f"{path}: {why}" for path, document in result_files(folder)
             if (why := disagreement("result", document))]
    assert not found, "the schema validators disagree:\n" + "\n".join(found)


@pytest.fixture(autouse=True)
def _fixture_agents_get_their_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHRIG_PASS_ENV", ",".join(FIXTURE_VARIABLES))


# The CLI as on a machine without bubblewrap: BenchRig finds helpers only in the system
# folders (benchrig.trusted), never on PATH, so a test hides it there instead.
WITHOUT_BUBBLEWRAP = [sys.executable, "-c", (
    "import runpy, benchrig.trusted as t\n"
    "found = t.program\n"
    "t.program = lambda name: None if name == 'bwrap' else found(name)\n"
    "runpy.run_module('benchrig.cli', run_name='__main__')")]


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str


def benchrig(*args: str, results_dir: Path, timeout: float = 600, env: dict[str, str] | None = None,
             command: list[str] | None = None) -> Ran:
    """Run the real CLI in a subprocess, results going to `results_dir`."""
    full_env = {**os.environ, "BENCHRIG_RESULTS_DIR": str(results_dir), **(env or {})}
    argv = command or [sys.executable, "-m", "benchrig.cli"]
    done = subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=ROOT, check=False)
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


def answer_file(tmp_path: Path, text: str, name: str = "answer.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def fenced(code: str, before: str = "", after: str = "") -> str:
    return f"{before}```python\n{code.rstrip()}\n```\n{after}"
