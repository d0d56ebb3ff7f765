"""A dataset task through `benchrig run` and the reports: per-sample results, --resume per
sample, the row pickers, intervals over samples, `--by sample` and `compare` by sample."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Ran, answer_file, cli_call
from tests.core.test_dataset_tasks import write_task

ROWS = [{"code": "fr", "country": "France", "capital": "Paris"},
        {"code": "pl", "country": "Polska", "capital": "Warszawa"},
        {"code": "ua", "country": "Україна", "capital": "Київ"}]


def _run(task: Path, answer: Path, results: Path, *args: str, model: str = "m") -> Ran:
    return cli_call("run", str(task), "-m", model, "-d", "replay", "-p", str(answer),
                    "--results-dir", str(results), *args, results_dir=results)


def _results(folder: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def test_each_row_runs_as_a_sample_and_resume_runs_only_new_rows(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks", ROWS)
    answer = answer_file(tmp_path, "Final answer: Paris\n")
    out = tmp_path / "results"
    ran = _run(task, answer, out)
    assert ran.code == 1, ran.stderr  # two samples fail
    found = {r["sample_id"]: r["result"] for r in _results(out)}
    assert found == {"fr": "pass", "pl": "fail", "ua": "fail"}
    assert "capitals#fr m replay: pass" in ran.stdout  # each verdict line names its sample
    again = _run(task, answer, out, "--resume")
    assert "3 of 3 attempts already have a result" in again.stderr
    write_task(tmp_path / "tasks", [ROWS[0], {**ROWS[1], "capital": "Warsaw"}, ROWS[2]])
    changed = _run(task, answer, out, "--resume")
    assert "2 of 3 attempts already have a result" in changed.stderr  # a changed row: new
    assert len(_results(out)) == 4


def test_rows_are_picked_by_id_limit_and_sample(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks", ROWS)
    answer = answer_file(tmp_path, "Final answer: Paris\n")
    out = tmp_path / "results"
    ran = _run(task, answer, out, "--sample-id", "pl", "--sample-id", "ua")
    assert sorted(str(r["sample_id"]) for r in _results(out)) == ["pl", "ua"], ran.stderr
    out2 = tmp_path / "r2"
    _run(task, answer, out2, "--limit", "1")
    assert [r["sample_id"] for r in _results(out2)] == ["fr"]
    out3 = tmp_path / "r3"
    _run(task, answer, out3, "--sample", "2", "--seed", "7")
    out4 = tmp_path / "r4"
    _run(task, answer, out4, "--sample", "2", "--seed", "7")
    assert sorted(str(r["sample_id"]) for r in _results(out3)) == \
        sorted(str(r["sample_id"]) for r in _results(out4))
    assert len(_results(out3)) == 2
    wrong = _run(task, answer, tmp_path / "r5", "--sample-id", "zz")
    assert wrong.code == 2 and "--sample-id zz: no sample" in wrong.stderr


def test_summary_is_over_samples_clustered_when_repeated(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks", ROWS)
    answer = answer_file(tmp_path, "Final answer: Paris\n")
    out = tmp_path / "results"
    _run(task, answer, out, "--runs", "2", "--allow-identical")
    ran = cli_call("summary", str(out), "--format", "json", results_dir=out)
    report = json.loads(ran.stdout)
    rate = json.dumps(report)
    assert '"n_tasks": 3' in rate and "cluster-robust" in rate, rate[:2000]
    assert report["changed_tasks"] == {}  # three rows are three samples, not three versions
    assert report["models"][0]["composite"]["run_range"]["runs"] == 2
    by_sample = cli_call("summary", str(out), "--by", "sample", results_dir=out)
    assert "capitals#fr" in by_sample.stdout and "2/2" in by_sample.stdout
    assert "capitals#pl" in by_sample.stdout and "0/2" in by_sample.stdout
    by_task = cli_call("summary", str(out), "--by", "task", results_dir=out)
    assert "2/6" in by_task.stdout and "capitals#" not in by_task.stdout


def test_compare_pairs_by_sample(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks", ROWS)
    out = tmp_path / "results"
    _run(task, answer_file(tmp_path, "Final answer: Paris\n", "a.md"), out, model="a")
    _run(task, answer_file(tmp_path, "Final answer: Warszawa\n", "b.md"), out, model="b")
    ran = cli_call("compare", "a", "b", str(out), "--format", "json", results_dir=out)
    assert ran.code == 0, ran.stderr
    rows = json.loads(ran.stdout)["suites"]
    overall = next(r for r in rows if r["suite"] in ("overall", "reasoning"))
    assert overall["tasks"] == 3
