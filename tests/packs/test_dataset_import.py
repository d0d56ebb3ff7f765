"""`benchrig import jsonl|csv`: one command turns a data file into a dataset task, written
only when every row loads, never with the answer in the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchrig.core.errors import TaskError, UsageError
from benchrig.packs.dataset_import import import_dataset
from benchrig.spec import load_samples
from tests.conftest import benchrig

CSV = "code,country,capital\nfr,France,Paris\npl,Polska,Warszawa\nua,Україна,Київ\n"


def _csv(tmp_path: Path, text: str = CSV) -> Path:
    path = tmp_path / "Capitals 2024.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_csv_becomes_a_dataset_task(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    task, count = import_dataset("csv", _csv(tmp_path), "What is the capital of {country}?",
                                 "capital", "code", base=tasks)
    assert task == tasks / "capitals-2024.md" and count == 3
    assert (tasks / "capitals-2024.csv").read_text(encoding="utf-8") == CSV
    samples = load_samples(task)
    assert [s.sample_id for s in samples] == ["fr", "pl", "ua"]
    assert samples[2].frontmatter["expected"] == "Київ"
    assert samples[2].body == "What is the capital of Україна?"


def test_the_cli_imports_a_jsonl(tmp_path: Path) -> None:
    source = tmp_path / "qa.jsonl"
    source.write_text("".join(json.dumps({"q": f"{n} + {n}?", "a": str(2 * n)}) + "\n"
                              for n in range(5)), encoding="utf-8")
    tasks = tmp_path / "tasks"
    ran = benchrig("import", "jsonl", str(source), "--template", "Compute {q}",
                   "--expected", "a", results_dir=tmp_path,
                   env={"BENCHRIG_TASKS_DIR": str(tasks)})
    assert ran.code == 0, ran.stderr
    assert "5 samples" in ran.stdout
    assert len(load_samples(tasks / "qa.md")) == 5


def test_attack_a_template_that_shows_the_answer_is_refused(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    with pytest.raises(TaskError) as caught:
        import_dataset("csv", _csv(tmp_path), "Capital of {country}? (hint: {capital})",
                       "capital", "code", base=tasks)
    assert "{capital} is read by the check" in caught.value.problems[0]
    assert not tasks.exists()  # nothing written


def test_a_bad_row_is_named_by_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    source = _csv(tmp_path, CSV + "de,Deutschland\n")
    tasks = tmp_path / "tasks"
    with pytest.raises(TaskError) as caught:
        import_dataset("csv", source, "Capital of {country}?", "capital", "code", base=tasks)
    assert caught.value.problems == [f"{source}: capitals-2024.csv line 5: 2 cells, the "
                                     "header has 3"]
    assert not tasks.exists()


def test_an_existing_task_is_replaced_only_with_force(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    import_dataset("csv", _csv(tmp_path), "Capital of {country}?", "capital", base=tasks)
    with pytest.raises(UsageError):
        import_dataset("csv", _csv(tmp_path), "Capital of {country}?", "capital", base=tasks)
    import_dataset("csv", _csv(tmp_path), "Capital of {country}?", "capital", base=tasks,
                   force=True)


def test_attack_a_data_file_that_is_a_device_is_refused(tmp_path: Path) -> None:
    """`x.csv` linking to /dev/zero would be copied forever (filling the disk): only a
    regular file, of bounded size, is imported."""
    link = tmp_path / "x.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="not a regular file"):
        import_dataset("csv", link, "Q {a}?", "b", base=tmp_path / "tasks")
