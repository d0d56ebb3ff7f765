"""The checkout's view of the package data: `tasks/` and `schema/` are links to the one copy
in benchrig/data/, and git ignores packs imported there but keeps the reference answers."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchrig import paths
from tests.conftest import ROOT


def test_the_checkout_links_point_at_the_package_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCHRIG_TASKS_DIR", raising=False)
    assert (ROOT / "tasks").resolve() == paths.BUNDLED_TASKS_DIR == paths.tasks_dir()
    assert (ROOT / "schema").resolve() == paths.SCHEMA_DIR


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
def test_git_ignores_imported_packs_and_keeps_the_references() -> None:
    def ignored(relative: str) -> bool:
        done = subprocess.run(["git", "check-ignore", "-q", "--no-index", relative], cwd=ROOT,
                              capture_output=True, check=False)
        return done.returncode == 0

    # where `benchrig import humaneval` writes, through the checkout's tasks/ link
    assert ignored("benchrig/data/tasks/humaneval/humaneval-0.md")
    assert not ignored("benchrig/data/tasks/.references/lru-cache.md")
    assert not ignored("benchrig/data/tasks/lru-cache.test.py")
