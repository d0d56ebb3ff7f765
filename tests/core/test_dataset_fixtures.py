"""The generated fixtures (tests/fixtures/datasets/make_fixtures.py): 220 rows of JSONL and of
CSV with ids, unicode, empty fields, and bad rows each named by the line it starts on."""

from __future__ import annotations

import csv
import importlib.util
import io
import re
import shutil
from pathlib import Path

import pytest

from benchrig.core.errors import TaskError
from benchrig.spec import load_samples

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
_spec = importlib.util.spec_from_file_location("make_fixtures", HERE / "make_fixtures.py")
assert _spec is not None and _spec.loader is not None
made = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(made)


def _lines(path: Path) -> list[int]:
    with pytest.raises(TaskError) as caught:
        load_samples(path)
    return [int(m.group(1)) for p in caught.value.problems
            if (m := re.search(r" line (\d+): ", p))]


def test_the_committed_fixtures_are_the_script_s() -> None:
    assert (HERE / "generated.jsonl").read_text(encoding="utf-8") == \
        "\n".join(made.jsonl_lines()) + "\n"
    assert (HERE / "generated.csv").read_text(encoding="utf-8") == made.csv_text()


def test_every_bad_jsonl_row_is_named_by_its_line() -> None:
    assert _lines(HERE / "generated-jsonl.md") == sorted(made.BAD_JSONL)  # a row a line


def test_every_bad_csv_row_is_named_by_the_line_it_starts_on() -> None:
    lines = (HERE / "generated.csv").read_text(encoding="utf-8").split("\n")
    starts = [i for i, text in enumerate(lines, 1) if re.match(r"g-\d{3},", text)]
    # row n starts on starts[n - 1] (a quoted line break makes a row two lines long)
    assert len(starts) == made.ROWS
    assert _lines(HERE / "generated-csv.md") == [starts[n - 1] for n in sorted(made.BAD_CSV)]


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_the_good_rows_load_with_unicode_and_empty_fields(tmp_path: Path, kind: str) -> None:
    shutil.copyfile(HERE / f"generated-{kind}.md", tmp_path / f"generated-{kind}.md")
    bad = made.BAD_JSONL if kind == "jsonl" else made.BAD_CSV
    if kind == "jsonl":
        text = "\n".join(line for n, line in enumerate(made.jsonl_lines(), 1)
                         if n not in bad) + "\n"
    else:
        header, *rows = csv.reader(io.StringIO(made.csv_text(), newline=""))
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(
            [header, *(r for n, r in enumerate(rows, 1) if n not in bad)])
        text = out.getvalue()
    (tmp_path / f"generated.{kind}").write_text(text, encoding="utf-8")
    samples = load_samples(tmp_path / f"generated-{kind}.md")
    assert len(samples) == made.ROWS - len(bad) >= 200
    assert len({s.sample_id for s in samples}) == len(samples)
    assert any("Київ" in s.body for s in samples) and any("東京" in s.body for s in samples)
    third = next(s for s in samples if s.sample_id == "g-003")  # its note is empty
    assert third.body.endswith("have?")
    assert third.frontmatter["expected"].isdigit()
