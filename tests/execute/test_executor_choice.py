"""`benchrig run --executor`: Ray is an optional extra, imported only when chosen; without it
the run is refused in one line naming the install; an unknown executor is a usage error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import answer_file, benchrig

pytestmark = pytest.mark.slow  # each runs the CLI in a subprocess

# The CLI on a machine where `import ray` fails, whatever this one has installed.
WITHOUT_RAY = [sys.executable, "-c", (
    "import runpy, sys\n"
    "sys.modules['ray'] = None\n"
    "runpy.run_module('benchrig.cli', run_name='__main__')")]


def test_without_ray_the_ray_executor_is_refused_naming_the_extra(tmp_path: Path) -> None:
    answer = answer_file(tmp_path, "x")
    ran = benchrig("run", "lru-cache", "-d", "replay", "-p", str(answer), "-m", "a",
                   "--executor", "ray", results_dir=tmp_path / "results", command=WITHOUT_RAY)
    assert ran.code == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.strip() == "error: --executor ray needs Ray: pip install '.[ray]'"
    assert not list((tmp_path / "results").glob("*.json"))


def test_the_local_executor_never_imports_ray(tmp_path: Path) -> None:
    answer = answer_file(tmp_path, "x")
    ran = benchrig("run", "lru-cache", "-d", "replay", "-p", str(answer), "-m", "a",
                   results_dir=tmp_path / "results", command=WITHOUT_RAY)
    assert ran.code == 1, ran.stderr  # the answer fails: a result, not a missing Ray


def test_an_unknown_executor_is_a_usage_error(tmp_path: Path) -> None:
    ran = benchrig("run", "lru-cache", "-d", "replay", "-p", "x", "--executor", "dask",
                   results_dir=tmp_path / "results")
    assert ran.code == 2 and "'dask' is not one of 'local', 'ray'" in ran.stderr, ran.stderr
