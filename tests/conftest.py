"""Shared fixtures: the repository's paths and a CLI runner that keeps stdout and stderr apart."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.llamas import alive_llamas, end_process_owners
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


@pytest.fixture(autouse=True, scope="session")
def _no_llama_outlives_the_session() -> Iterator[None]:
    """No llama_cpp.Llama is left alive when the tests end: one kept past the process's
    atexit is finalized after the modules are torn down, and llama-cpp-python's __del__ then
    prints "Exception ignored ... 'NoneType' object is not callable" at the worker's exit."""
    yield
    end_process_owners()  # what atexit would close, before the modules are torn down
    alive = alive_llamas()
    assert not alive, "left alive at the end of the tests: " + "; ".join(alive)


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


def cli_call(*args: str, results_dir: Path, env: dict[str, str] | None = None) -> Ran:
    """The CLI's `main` in this process, for a test of what a command does rather than of the
    process: no interpreter start and no imports each time (~0.5 s a call on a busy 2-core
    machine, most of the fast lane's time). Stdout and stderr are kept apart as `benchrig()`
    keeps them; the environment, argv and working folder are restored after, and warnings
    and log records reach stderr as they would in a process of its own (pytest's own capture
    would take them). Not for what only a process shows: plugins found at start-up, exit
    codes of a signal, a hang (no timeout here), start-up itself."""
    from benchrig.cli import main

    saved_env, saved_cwd, saved_argv = dict(os.environ), Path.cwd(), sys.argv
    sys.argv = [str(ROOT / "benchrig" / "cli" / "__main__.py"), *args]  # as `python -m` sets it
    # encoded as a pipe encodes them: a lone surrogate on stdout fails here as it would there
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    os.environ.update({"BENCHRIG_RESULTS_DIR": str(results_dir), **(env or {})})
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                _stderr_as_a_process(err):
            main(list(args))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if not isinstance(done.code, int | None):  # the interpreter prints any other value
            print(done.code, file=err)
    else:  # main() always ends in SystemExit
        raise AssertionError("main() returned")
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return Ran(code, _written(out), _written(err))


@contextlib.contextmanager
def _stderr_as_a_process(err: io.TextIOWrapper) -> Iterator[None]:
    """Log records of WARNING and above, and warnings under Python's default filters, written
    to `err` as a process without logging configured writes them (logging's last resort)."""
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                             ResourceWarning):
                warnings.simplefilter("ignore", category)
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
            warnings.showwarning = _show_on(err)
            yield
    finally:
        root.removeHandler(handler)


def _show_on(err: io.TextIOWrapper) -> Callable[..., None]:
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: object = None, line: str | None = None) -> None:
        err.write(warnings.formatwarning(message, category, filename, lineno, line))
    return show


def _written(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    # and read back as `subprocess.run(text=True)` reads them: universal newlines
    return raw.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


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
