"""BenchRig as a user installs it: the wheel built from this checkout, installed into a fresh
venv outside it, run from an empty folder (its schemas and tasks from the package, its results
in that folder's ./results); and where results go by default."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from benchrig import paths
from benchrig.schemas import problems
from tests.conftest import ROOT


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


BUILT: dict[str, str] = {}  # the fixture's build: its stderr and the wheel's path


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside the checkout holding only the built wheel; its dependencies come from
    the shared venv's site-packages by a path file, the shared venv itself untouched."""
    base = tmp_path_factory.mktemp("installed")
    # built from a copy, so that the build leaves nothing (build/, *.egg-info) in the checkout
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "benchrig", source / "benchrig",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHRIG_")}
    wheels = base / "wheels"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w",
                  str(wheels)], base, env)
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("benchrig-*.whl")
    BUILT.update(stderr=built.stderr, wheel=str(wheel))
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     base, env).stdout.strip())
    # after the venv's own site-packages on sys.path, so the wheel's benchrig comes first
    (site / "zz_shared_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n",
                                                     encoding="utf-8")
    put = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                "-q", str(wheel)], base, env)
    assert put.returncode == 0, put.stderr
    return venv


@pytest.mark.slow
def test_the_wheel_builds_without_a_deprecation_and_says_its_licence(installed: Path) -> None:
    """setuptools deprecated the `project.license` table (removal 2027-02-18): the SPDX
    string builds with no warning and is written as the wheel's License-Expression."""
    import zipfile

    assert "deprecat" not in BUILT["stderr"].lower(), BUILT["stderr"]
    with zipfile.ZipFile(BUILT["wheel"]) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = wheel.read(name).decode("utf-8")
        licence = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        text = wheel.read(licence[0]).decode("utf-8") if licence else ""
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()
    # the licence's text travels with the wheel, not only its name
    assert text.startswith("MIT License") and "WITHOUT WARRANTY" in text, licence


@pytest.mark.slow
def test_the_wheel_carries_real_schema_and_task_files(installed: Path) -> None:
    python = installed / "bin" / "python"
    where = _run([str(python), "-c", "import benchrig.paths as p; print(p.DATA_DIR)"],
                 installed, {})
    data = Path(where.stdout.strip())
    assert data.is_relative_to(installed), (where.stdout, where.stderr)
    # pip byte-compiles the hidden tests (*.test.py) as it installs: not files of the wheel
    found = sorted(p.relative_to(data).as_posix() for p in data.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    bundled = ROOT / "benchrig" / "data"
    # packs imported into the checkout (tasks/<pack>/, git-ignored) are no part of the wheel
    expected = sorted(p.relative_to(bundled).as_posix() for p in bundled.rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts
                      and (len(p.relative_to(bundled).parts) == 2
                           or p.relative_to(bundled).parts[1] == ".references"))
    assert found == expected and "schema/result.schema.json" in found
    assert not any(p.is_symlink() for p in data.rglob("*"))


@pytest.mark.slow
def test_installed_benchrig_runs_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHRIG_")}
    env["PATH"] = f"{installed / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    benchrig = str(installed / "bin" / "benchrig")

    listed = _run([benchrig, "list"], folder, env)
    assert listed.returncode == 0, listed.stderr
    assert "bat-and-ball" in listed.stdout and "lru-cache" in listed.stdout
    checked = _run([benchrig, "validate"], folder, env)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    answer = tmp_path / "answer.md"
    answer.write_text("The ball costs 5 cents.\n\nFinal answer: 5\n", encoding="utf-8")
    ran = _run([benchrig, "run", "bat-and-ball", "--suite", "reasoning", "--model", "oracle",
                "--driver", "replay", "--provider", str(answer)], folder, env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    written = sorted((folder / "results").glob("*.json"))
    assert len(written) == 1, sorted(p.name for p in folder.rglob("*"))
    result = json.loads(written[0].read_text(encoding="utf-8"))
    assert problems("result", result) == []
    assert (result["task"], result["result"]) == ("bat-and-ball", "pass")
    assert not any(installed.rglob("results/*.json"))  # nothing written inside the package


@pytest.mark.slow
def test_installed_benchrig_imports_packs_beside_results_never_into_the_package(
        installed: Path, tmp_path: Path) -> None:
    """An installed package's folder is not a user's data folder: `benchrig import` writes
    ./tasks/packs/<pack>/ (beside ./results), and `verify` and `run --pack` find it there."""
    folder = tmp_path / "work"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHRIG_")}
    benchrig = str(installed / "bin" / "benchrig")
    sample = ROOT / "tests" / "fixtures" / "packs" / "mbpp-sample.jsonl"

    imported = _run([benchrig, "import", "mbpp", "--from", str(sample)], folder, env)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert not list(installed.rglob("pack.json")), "a pack was written into the package"
    pack = folder / "tasks" / "packs" / "mbpp"
    assert (pack / "pack.json").is_file(), sorted(str(p) for p in folder.rglob("*"))
    verified = _run([benchrig, "verify", "mbpp"], folder, env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert list((pack / ".verify").iterdir())
    planned = _run([benchrig, "run", "--pack", "mbpp", "--model", "m", "--driver", "replay",
                    "--provider", str(pack / ".references"), "--dry-run"], folder, env)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "5" in planned.stdout + planned.stderr


def test_results_go_to_the_current_folder_when_installed(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed, the package's own folder is no place for results: ./results instead."""
    site = tmp_path / "site-packages"
    (site / "benchrig").mkdir(parents=True)
    monkeypatch.setattr(paths, "ROOT", site)
    monkeypatch.delenv("BENCHRIG_RESULTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert paths.results_dir() == tmp_path / "results"


def test_imports_go_beside_results_when_installed_and_to_tasks_in_the_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCHRIG_TASKS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert paths.imports_dir() == paths.tasks_dir()  # the checkout: tasks/<pack>/ as before
    site = tmp_path / "site-packages"
    (site / "benchrig").mkdir(parents=True)
    monkeypatch.setattr(paths, "ROOT", site)
    assert paths.imports_dir() == tmp_path / "tasks" / "packs"
    monkeypatch.setenv("BENCHRIG_TASKS_DIR", str(tmp_path / "mine"))
    assert paths.imports_dir() == tmp_path / "mine"  # said explicitly: wherever it is


def test_results_stay_in_the_checkout_when_run_from_it(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.delenv("BENCHRIG_RESULTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert paths.results_dir() == ROOT / "results"
