"""`benchrig report --html FILE` replaces only a BenchRig report: a result, or any other
file named by mistake, is refused (exit 2) unless --force."""

from __future__ import annotations

from pathlib import Path

from benchrig.report.marker import MARKER, is_report
from tests.conftest import cli_call
from tests.helpers.result_sets import attempt, write


def _folder(tmp_path: Path) -> Path:
    return write(tmp_path / "r", [attempt("alpha", "t1", "pass"), attempt("alpha", "t2", "fail")])


def test_a_result_named_as_the_report_is_not_overwritten(tmp_path: Path) -> None:
    """The slip that replaced a result JSON with HTML, rc 0: now exit 2, the file intact."""
    folder = _folder(tmp_path)
    victim = next(folder.glob("*.json"))
    before = victim.read_bytes()
    ran = cli_call("report", str(folder), "--html", str(victim), results_dir=tmp_path)
    assert ran.code == 2, ran.stdout
    assert "is not a BenchRig report" in ran.stderr and "--force" in ran.stderr
    assert victim.read_bytes() == before


def test_a_file_quoting_the_marker_is_still_not_a_report(tmp_path: Path) -> None:
    """A result whose answer quotes the marker does not pass: the mark must be in an HTML
    head."""
    quoting = tmp_path / "answer.json"
    quoting.write_text('{"answer": "<!DOCTYPE html><head>' + MARKER.replace('"', '\\"')
                       + '</head>"}', encoding="utf-8")
    assert not is_report(quoting)
    ran = cli_call("report", str(_folder(tmp_path)), "--html", str(quoting),
                   results_dir=tmp_path)
    assert ran.code == 2 and quoting.read_text(encoding="utf-8").startswith('{"answer"')


def test_a_report_is_rewritten_and_force_overwrites_anything(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    out = tmp_path / "report.html"
    for _ in range(2):  # the second run replaces the first report
        ran = cli_call("report", str(folder), "--html", str(out), results_dir=tmp_path)
        assert ran.code == 0, ran.stderr
    assert is_report(out) and MARKER in out.read_text(encoding="utf-8")
    other = tmp_path / "notes.html"
    other.write_text("<!DOCTYPE html><head><title>mine</title></head>", encoding="utf-8")
    assert cli_call("report", str(folder), "--html", str(other), results_dir=tmp_path).code == 2
    ran = cli_call("report", str(folder), "--html", str(other), "--force", results_dir=tmp_path)
    assert ran.code == 0 and is_report(other)
