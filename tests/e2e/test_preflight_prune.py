"""`benchrig results prune`: errors, a label, a date; a dry run unless --yes; each result
deleted with its transcript sidecar, nothing else touched. And a mistyped results path says
so instead of calling it an invalid result."""

from __future__ import annotations

from pathlib import Path

from benchrig.resultio.files import result_path
from tests.conftest import cli_call
from tests.helpers.result_sets import attempt, write


def _folder(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    folder = tmp_path / "results"
    made = {
        "old-error": attempt("m", "t1", "error", started="2026-11-01T10:00:00Z"),
        "new-error": attempt("m", "t2", "error", started="2026-11-30T10:00:00Z"),
        "old-pass": attempt("m", "t3", "pass", started="2026-11-01T10:00:00Z"),
        "labelled": attempt("m", "t4", "fail", started="2026-11-30T10:00:00Z", label="try1"),
    }
    write(folder, list(made.values()))
    files = {name: result_path(folder, r) for name, r in made.items()}
    for file in files.values():
        file.with_suffix(".transcript.jsonl").write_text("{}\n")
    (folder / "notes.json").write_text("not a result")  # never pruned
    return folder, files


def _left(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_prune_is_a_dry_run_until_yes(tmp_path: Path) -> None:
    folder, files = _folder(tmp_path)
    before = _left(folder)
    ran = cli_call("results", "prune", str(folder), "--errors", results_dir=folder)
    assert ran.code == 0, ran.stderr
    assert set(ran.stdout.split()) == {str(files["old-error"]), str(files["new-error"])}
    assert "would delete 2 results and 2 transcripts" in ran.stderr and "--yes" in ran.stderr
    assert _left(folder) == before
    ran = cli_call("results", "prune", str(folder), "--errors", "--before", "2026-11-15",
                   "--yes", results_dir=folder)
    assert ran.code == 0, ran.stderr
    gone = {files["old-error"].name, files["old-error"].with_suffix(".transcript.jsonl").name}
    assert _left(folder) == before - gone


def test_prune_by_label_and_needs_a_filter(tmp_path: Path) -> None:
    folder, files = _folder(tmp_path)
    ran = cli_call("results", "prune", "--label", "try1", "--yes", results_dir=folder)
    assert ran.code == 0, ran.stderr
    assert not files["labelled"].exists()
    assert not files["labelled"].with_suffix(".transcript.jsonl").exists()
    assert all(files[n].exists() for n in ("old-error", "new-error", "old-pass"))
    bare = cli_call("results", "prune", "--yes", results_dir=folder)
    assert bare.code == 2 and "needs a filter" in bare.stderr
    assert (folder / "notes.json").exists()


def test_a_mistyped_results_path_says_no_such_folder(tmp_path: Path) -> None:
    missing = tmp_path / "reslts"
    for command in ("summary", "report"):
        ran = cli_call(command, str(missing), results_dir=tmp_path)
        assert ran.code == 2, ran.stderr
        assert ran.stderr.strip() == f"error: {missing}: no such file or folder", ran.stderr
