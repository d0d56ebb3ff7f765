"""benchrig.api: docs/library.md's example runs as written; bad input is BenchRig's error
before anything runs; the library prints nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import BenchRigError, UsageError
from benchrig.schemas import problems
from tests.conftest import ROOT

DOC = ROOT / "docs" / "library.md"
EXAMPLE = re.compile(r"<!-- example -->\n```python\n(?P<code>.*?)\n```\n", re.S)
REFERENCES = str(ROOT / "tasks" / ".references")


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    out = tmp_path / "results"
    monkeypatch.setenv("BENCHRIG_RESULTS_DIR", str(out))
    monkeypatch.chdir(ROOT)  # the example names tasks/.references from the checkout
    return out


def test_the_library_example_runs_as_written(results_dir: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = EXAMPLE.search(DOC.read_text(encoding="utf-8"))
    assert code, "docs/library.md has no <!-- example --> python block"
    exec(compile(code["code"], str(DOC), "exec"), {})
    shown = capsys.readouterr().out
    assert "lru-cache reference pass" in shown and "100% (1/1)" in shown
    from benchrig import api

    loaded = api.load_results(results_dir)
    assert [(r.task, r.model, r.result) for r in loaded] == [("lru-cache", "reference",
                                                              "pass")]


def test_a_run_yields_schema_valid_results_and_prints_nothing(
        results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchrig import api

    seen: list[str] = []
    results = list(api.run(["valid-brackets", "flatten-dict"], ["reference"],
                           driver="replay", provider=REFERENCES, runs=2, jobs=2,
                           on_result=lambda r: seen.append(r["run_id"])))
    assert len(results) == 4 and {r["result"] for r in results} == {"pass"}
    assert all(problems("result", r) == [] for r in results)
    assert seen == [r["run_id"] for r in results]  # told as each is written
    assert len(list(results_dir.glob("*-reference-*[0-9a-f].json"))) == 4
    assert "reference" in api.summarize(results, format="markdown")
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("call", [
    {"tasks": ["no-such-task"]},
    {"driver": "no-such-driver"},
    {"suites": ["no-such-suite"]},
    {"runs": 0},
    {"tasks": [], "suites": ["load"]},  # a sweep: its own runner, never a harness error
])
def test_bad_input_is_benchrigs_error_before_anything_runs(
        results_dir: Path, call: dict[str, object],
        capsys: pytest.CaptureFixture[str]) -> None:
    from benchrig import api

    given: dict[str, Any] = {"tasks": ["lru-cache"], "models": ["reference"], "driver": "replay",
             "provider": REFERENCES, **call}
    with pytest.raises(BenchRigError) as raised:
        api.run(**given)
    assert isinstance(raised.value, UsageError) or "no-such-task" in str(raised.value)
    assert not results_dir.exists() or not list(results_dir.glob("*.json"))
    assert capsys.readouterr().out == ""


def test_an_unknown_summary_format_is_a_usage_error() -> None:
    from benchrig import api

    with pytest.raises(UsageError, match="unknown format"):
        api.summarize([], format="yaml")


def test_stopping_early_stops_the_run(results_dir: Path) -> None:
    import threading

    from benchrig import api

    results = api.run(["valid-brackets", "flatten-dict", "merge-intervals", "lru-cache"],
                      ["reference"], driver="replay", provider=REFERENCES)
    first = next(results)
    results.close()  # the caller has what it wanted: nothing more runs or is written
    assert first["result"] == "pass"
    assert not [t for t in threading.enumerate() if t.name == "benchrig-api-run"]
    assert len(list(results_dir.glob("*-reference-*[0-9a-f].json"))) <= 2
