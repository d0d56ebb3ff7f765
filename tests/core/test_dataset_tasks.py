"""Dataset tasks: one Markdown file over JSONL/CSV rows, each row a validated sample whose
answers and tests stay hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import TaskError
from benchrig.drivers import get_driver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.prompt import render
from benchrig.spec import load_samples, load_task, load_tasks
from tests.conftest import cli_call

ROOT = Path(__file__).resolve().parents[2]

CAPITALS = """---
id: capitals
suite: reasoning
language: en
difficulty: easy
tags: [geography]
timeout_s: 60
dataset: {data}
{extra}expected: "{{capital}}"
check:
  type: final_answer
  accept: ["{{capital}}"]
---

{body}
"""
BODY = "# Capital of {country}\n\nWhat is the capital of {country}? ({{braces}} stay.)"


def write_task(folder: Path, rows: list[Any] | str, *, data: str = "capitals.jsonl",
               body: str = BODY, extra: str = "id_field: code\n",
               text: str | None = None, name: str = "capitals") -> Path:
    """A dataset task and its rows (JSON values one a line, or the file's text as given)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / data).write_text(rows if isinstance(rows, str) else
                               "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                               encoding="utf-8")
    path = folder / f"{name}.md"
    path.write_text(text or CAPITALS.format(data=data, extra=extra, body=body),
                    encoding="utf-8")
    return path


ROWS = [{"code": "fr", "country": "France", "capital": "Paris"},
        {"code": "pl", "country": "Polska", "capital": "Warszawa"}]


def problems_of(path: Path) -> list[str]:
    with pytest.raises(TaskError) as caught:
        load_samples(path)
    return caught.value.problems


def test_each_row_is_a_sample_with_its_prompt_and_check(tmp_path: Path) -> None:
    samples = load_samples(write_task(tmp_path, ROWS))
    assert [s.sample_id for s in samples] == ["fr", "pl"]
    assert {s.id for s in samples} == {"capitals"}
    first = samples[0]
    assert first.title == "Capital of France"
    assert first.body.endswith("What is the capital of France? ({braces} stay.)")
    assert dict(first.check) == {"type": "final_answer", "accept": ["Paris"]}
    assert first.frontmatter["expected"] == "Paris"
    assert first.row_hash is not None and first.row_hash.startswith("sha256:")
    assert len({s.task_hash for s in samples}) == 2
    # the template itself loads as one task, its body unfilled
    assert load_task(tmp_path / "capitals.md").body.startswith("# Capital of {country}")


def test_a_changed_row_is_a_new_sample(tmp_path: Path) -> None:
    before = load_samples(write_task(tmp_path, ROWS))
    after = load_samples(write_task(tmp_path, [ROWS[0], {**ROWS[1], "capital": "Krakow"}]))
    assert before[0].task_hash == after[0].task_hash
    assert before[1].sample_id == after[1].sample_id
    assert before[1].row_hash != after[1].row_hash
    assert before[1].task_hash != after[1].task_hash


def test_without_an_id_field_the_id_is_the_row_number_and_a_hash(tmp_path: Path) -> None:
    samples = load_samples(write_task(tmp_path, ROWS, extra=""))
    ids = [s.sample_id or "" for s in samples]
    assert ids[0].startswith("1-") and ids[1].startswith("2-") and len(ids[0]) == 10
    assert ids == [s.sample_id for s in load_samples(tmp_path / "capitals.md")]


def test_a_missing_field_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    path = write_task(tmp_path, [ROWS[0], {"code": "de", "country": "Deutschland"}])
    assert problems_of(path) == [f"{path}: capitals.jsonl line 2: expected: field 'capital' "
                                 "is missing"]


def test_a_field_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    path = write_task(tmp_path, [ROWS[0], {"code": "it", "country": "Italia",
                                           "capital": ["Roma"]}])
    problems = problems_of(path)
    assert problems == [f"{path}: capitals.jsonl line 2: expected: field 'capital' is list, "
                        "not a string or number"]


def test_bad_rows_are_each_named_by_line(tmp_path: Path) -> None:
    text = (json.dumps(ROWS[0]) + "\n\n[1, 2]\n{not json\n"
            + json.dumps({**ROWS[1], "code": "fr"}) + "\n")
    problems = problems_of(write_task(tmp_path, text))
    assert [p.split(": ", 1)[1].split(":")[0] for p in problems] == [
        "capitals.jsonl line 3", "capitals.jsonl line 4", "capitals.jsonl line 5"]
    assert "repeats the row at line 1" in problems[2]


def test_a_lone_brace_in_the_template_is_refused(tmp_path: Path) -> None:
    path = write_task(tmp_path, ROWS, body="What is {country}'s capital? {'a': 1}")
    assert problems_of(path) == [f"{path}: body: line 1: a lone '{{' (write {{{{ for a "
                                 "literal brace, {name} for a field)"]


def test_a_row_check_is_validated_by_its_check(tmp_path: Path) -> None:
    """A regex that does not compile in one row is that row's problem, found at load."""
    path = write_task(tmp_path, [ROWS[0], {"code": "xx", "country": "X", "capital": "(["}])
    problems = problems_of(path)
    assert len(problems) == 1 and "capitals.jsonl line 2: " in problems[0]
    assert "accept" in problems[0]


def test_csv_rows_keep_unicode_and_empty_cells(tmp_path: Path) -> None:
    text = "code,country,capital,note\nfr,France,Paris,\nua,Україна,Київ,\"a, b\"\n"
    samples = load_samples(write_task(tmp_path, text, data="capitals.csv"))
    assert [s.sample_id for s in samples] == ["fr", "ua"]
    assert "Україна" in samples[1].body and samples[1].frontmatter["expected"] == "Київ"


def test_csv_bad_row_named_by_its_line(tmp_path: Path) -> None:
    text = "code,country,capital\nfr,France,Paris\nmu,\"multi\nline\",Y\nxx,only-two\n"
    problems = problems_of(write_task(tmp_path, text, data="capitals.csv"))
    assert len(problems) == 1 and "capitals.csv line 5: 2 cells, the header has 3" in \
        problems[0]


# --- hidden data stays hidden -------------------------------------------------------------

def test_attack_a_prompt_that_shows_the_answer_field_is_refused(tmp_path: Path) -> None:
    """A task author (or an import) putting the check's field in the prompt would hand every
    model its answer: refused at load, before any row is read."""
    path = write_task(tmp_path, ROWS, body="Capital of {country}? (It is {capital}.)")
    problems = problems_of(path)
    assert problems == [f"{path}: body: {{capital}} is read by the check (expected, check, "
                        "a turn's call or answer), so it is hidden and may not appear in the "
                        "prompt, title, tools or a turn's user text"]


def test_attack_answer_not_in_prompt_nor_transcript(tmp_path: Path) -> None:
    """A row's expected answer never reaches the rendered prompt, the driver's view or the
    transcript's prompt, even when a row's own text spells the template's placeholder."""
    rows = [{"code": "zz", "country": "Zembla {capital}", "capital": "Onhava"}]
    sample, = load_samples(write_task(tmp_path / "task", rows))
    prompt = json.dumps(render(sample), ensure_ascii=False)
    assert "Onhava" not in prompt and "Zembla {capital}" in prompt
    assert "Onhava" not in repr(sample.view())
    answer = tmp_path / "answer.md"
    answer.write_text("Final answer: Onhava\n", encoding="utf-8")
    out = tmp_path / "results"
    attempt = run_attempt(sample, "m", get_driver("replay"), str(answer),
                          settings_for(sample, Overrides()), out, agent="replay")
    assert attempt.result["result"] == "pass"
    assert attempt.result["sample_id"] == "zz"
    assert attempt.result["row_hash"] == sample.row_hash
    sidecar, = out.glob("*.jsonl")
    first = json.loads(sidecar.read_text(encoding="utf-8").splitlines()[0])
    assert first["kind"] == "prompt" and "Onhava" not in json.dumps(first, ensure_ascii=False)


def test_attack_a_linked_dataset_folder_is_hidden_from_agents(tmp_path: Path) -> None:
    """The dataset holds every answer: its folder, and the folder a link to it resolves to,
    are hidden like the task's tests."""
    elsewhere = tmp_path / "private"
    elsewhere.mkdir()
    (elsewhere / "rows.jsonl").write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    task = tmp_path / "tasks"
    path = write_task(task, ROWS)
    (task / "capitals.jsonl").unlink()
    (task / "capitals.jsonl").symlink_to(elsewhere / "rows.jsonl")
    sample, = load_samples(path)
    assert elsewhere in sample.folders and task in sample.folders


def test_attack_row_data_in_a_test_template_is_a_literal(tmp_path: Path) -> None:
    """`{field}` in row_tests is the row's value as a Python literal: a row cannot write
    code into a hidden test that runs in BenchRig's process."""
    text = """---
id: square
suite: coding
language: python
difficulty: easy
tags: [demo]
timeout_s: 60
dataset: rows.jsonl
entry_point: square
row_tests: |
  from solution import square

  def test_square():
      assert square({x}) == {y}
---

Write `square(x)` returning x squared; for example square({x}).
"""
    rows = [{"x": 3, "y": 9}, {"x": 2, "y": "__import__('os').system('touch pwned')"}]
    path = write_task(tmp_path, rows, data="rows.jsonl", text=text, name="square")
    samples = load_samples(path)
    assert "assert square(3) == 9" in (samples[0].test_source or "")
    assert "== \"__import__('os').system('touch pwned')\"" in (samples[1].test_source or "")
    assert all(s.test_names == ("test_square",) for s in samples)


def test_validate_checks_every_row(tmp_path: Path) -> None:
    path = write_task(tmp_path, [ROWS[0], {"code": "de", "country": "Deutschland"}])
    done = cli_call("validate", str(path), results_dir=tmp_path / "results")
    assert done.code == 2
    assert "capitals.jsonl line 2: expected: field 'capital' is missing" in done.stderr
    good = write_task(tmp_path / "ok", ROWS)
    done = cli_call("validate", str(good), results_dir=tmp_path / "results")
    assert done.code == 0, done.stderr
    assert "1 task(s) valid (2 samples)" in done.stdout


def test_load_tasks_expands_samples(tmp_path: Path) -> None:
    path = write_task(tmp_path, ROWS)
    assert [t.sample_id for t in load_tasks([path])] == ["fr", "pl"]


ROW_FILE_TASK = """---
id: double
suite: coding
language: python
difficulty: easy
tags: [demo]
timeout_s: 60
dataset: rows.jsonl
id_field: id
entry_point: double
row_tests_file: "{tests}"
---

Write `double(x)` returning twice x, for example double({x}).
"""


def test_each_row_may_name_its_test_file(tmp_path: Path) -> None:
    (tmp_path / "hidden").mkdir()
    for n in (1, 2):
        (tmp_path / "hidden" / f"r{n}.py").write_text(
            f"from solution import double\n\ndef test_double_{n}():\n"
            f"    assert double({n}) == {2 * n}\n", encoding="utf-8")
    rows = [{"id": f"r{n}", "x": n, "tests": f"hidden/r{n}.py"} for n in (1, 2)]
    path = write_task(tmp_path, rows, data="rows.jsonl", text=ROW_FILE_TASK, name="double")
    first, second = load_samples(path)
    assert first.test_names == ("test_double_1",) and second.test_names == ("test_double_2",)
    assert first.test_path == tmp_path / "hidden" / "r1.py"
    assert tmp_path / "hidden" in first.folders  # hidden from agents with the task
    assert "hidden/r1.py" not in first.body and "assert" not in first.body


def test_attack_a_row_s_test_file_cannot_leave_the_task_folder(tmp_path: Path) -> None:
    """A row naming `../x.py` or `/etc/x.py` would run (and hide) a file outside the task's
    folder as a trusted test: refused, naming the row's line."""
    outside = tmp_path / "outside.py"
    outside.write_text("def test_ok():\n    pass\n", encoding="utf-8")
    rows = [{"id": "a", "x": 1, "tests": "../outside.py"},
            {"id": "b", "x": 2, "tests": str(outside)}]
    path = write_task(tmp_path / "task", rows, data="rows.jsonl", text=ROW_FILE_TASK,
                      name="double")
    problems = problems_of(path)
    assert len(problems) == 2
    assert "rows.jsonl line 1: row_tests_file: '../outside.py' is not a .py file under " \
           "the task's folder" in problems[0]
    assert "rows.jsonl line 2: row_tests_file:" in problems[1]


def test_attack_row_text_with_lone_surrogates_and_controls_is_outside_text(
        tmp_path: Path) -> None:
    """A row is outside text: a lone surrogate or a terminal escape in it is stored and shown
    through textsafe, never a crash writing the result or a cursor moved on the terminal."""
    bad = ('{"code": "zz", "country": "Zembla", "capital": "On\\ud800hava\\u009b"}\n')
    problems = problems_of(write_task(tmp_path / "bad", bad))
    assert "\\ud800" in problems[0] and "\\x9b" in problems[0]  # named, printable
    text = ('{"code": "zz", "country": "Zem\\ud800bla\\u001b[2J", "capital": "Onhava"}\n')
    sample, = load_samples(write_task(tmp_path / "task", text))
    answer = tmp_path / "answer.md"
    answer.write_text("Final answer: Onhava\n", encoding="utf-8")
    out = tmp_path / "results"
    attempt = run_attempt(sample, "m", get_driver("replay"), str(answer),
                          settings_for(sample, Overrides()), out, agent="replay")
    assert attempt.result["result"] == "pass"
    stored = attempt.path.read_text(encoding="utf-8")  # written, valid UTF-8
    assert json.loads(stored)["sample_id"] == "zz"
    sidecar, = out.glob("*.jsonl")
    assert "\\\\ud800" in sidecar.read_text(encoding="utf-8")  # escaped as text, kept


WEATHER = """---
id: weather
suite: tool_use
language: en
difficulty: easy
tags: [tool-use]
timeout_s: 60
dataset: cities.csv
id_field: id
check:
  type: tool_calls
tools:
- type: function
  function:
    name: get_weather
    description: Current weather for a city.
    parameters:
      type: object
      properties:
        city: {type: string}
      required: [city]
turns:
- call:
    name: get_weather
    arguments:
      city: "{city_en}"
---

What is the weather like in {city_local} right now?
"""


def _tool_reply(tmp_path: Path, city: str) -> Path:
    path = tmp_path / f"{city}.json"
    path.write_text(json.dumps({"turns": [{"tool_calls": [
        {"name": "get_weather", "arguments": json.dumps({"city": city})}]}]}),
        encoding="utf-8")
    return path


def test_a_tool_case_s_turns_are_filled_per_row(tmp_path: Path) -> None:
    text = WEATHER
    path = write_task(tmp_path, "id,city_local,city_en\nwaw,Warszawa,Warsaw\nmuc,München,"
                      "Munich\n", data="cities.csv", text=text, name="weather")
    waw, muc = load_samples(path)
    assert waw.frontmatter["turns"][0]["call"]["arguments"] == {"city": "Warsaw"}
    assert "Warsaw" not in json.dumps(render(waw), ensure_ascii=False)
    out = tmp_path / "results"
    for sample, said, verdict in ((waw, "Warsaw", "pass"), (muc, "Warsaw", "fail")):
        result = run_attempt(sample, "m", get_driver("replay"), str(_tool_reply(tmp_path, said)),
                             settings_for(sample, Overrides()), out, agent="replay").result
        assert result["result"] == verdict, result["notes"]


def test_attack_a_turn_s_user_text_that_shows_the_call_is_refused(tmp_path: Path) -> None:
    text = WEATHER
    text = text.replace("in {city_local} right now?", "in {city_local} ({city_en})?")
    path = write_task(tmp_path, "id,city_local,city_en\nwaw,Warszawa,Warsaw\n",
                      data="cities.csv", text=text, name="weather")
    assert "{city_en} is read by the check" in problems_of(path)[0]


def test_a_problem_every_row_shares_is_said_once_with_a_count(tmp_path: Path) -> None:
    """A typo in the template (a field no row has) fails all 1,000 rows: the first rows
    are named, then one line counts the rest, not 1,000 lines."""
    rows = [{"code": f"c{n}", "country": f"C{n}", "capital": f"K{n}"} for n in range(1000)]
    path = write_task(tmp_path, rows, body="Capital of {contry}?")
    problems = problems_of(path)
    assert len(problems) == 5
    assert problems[0].endswith("capitals.jsonl line 1: body: field 'contry' is missing")
    assert problems[4].endswith("capitals.jsonl lines 5–1000 (996 more rows): body: field "
                                "'contry' is missing")


def test_a_missing_or_empty_data_file_is_named(tmp_path: Path) -> None:
    path = write_task(tmp_path, "")
    assert problems_of(path) == [f"{path}: capitals.jsonl: no rows"]
    (tmp_path / "capitals.jsonl").unlink()
    problem, = problems_of(path)
    assert problem.startswith(f"{path}: capitals.jsonl: cannot open it")


def test_attack_a_dataset_of_millions_of_rows_is_refused_before_it_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each row becomes a TaskSpec: 256 MiB of `{}` lines would be 90 million of them. The
    rows are counted as they are read, and reading stops at the cap."""
    from benchrig import dataset

    monkeypatch.setattr(dataset, "MAX_ROWS", 50)
    rows = [{"code": f"c{n}", "country": f"C{n}", "capital": f"K{n}"} for n in range(80)]
    problem, = problems_of(write_task(tmp_path, rows))
    assert problem.endswith("capitals.jsonl line 51: more than 50 rows (split the file into "
                            "tasks of fewer rows each)")


MIXED = """---
id: mixed
suite: reasoning
language: en
difficulty: easy
tags: [demo]
timeout_s: 60
dataset: rows.jsonl
id_field: id
expected: "{answer}"
CHECK
---

{question}
"""


@pytest.mark.parametrize(("check", "right", "wrong"), [
    ("evaluator: numeric\ncheck:\n  type: final_answer", "Final answer: 12.0",
     "Final answer: 13"),
    ("check:\n  type: regex\n  patterns: ['(?:\\w+ ){{0,2}}\\b{answer}\\b']",
     "The box holds 12", "The box holds 21 or 112"),
    ("check:\n  type: exact_or_contains", "It is 12.", "It is 21."),
])
def test_every_answer_check_works_per_row(tmp_path: Path, check: str, right: str,
                                          wrong: str) -> None:
    rows = [{"id": "a", "question": "How many?", "answer": "12", "word": "red"}]
    path = write_task(tmp_path, rows, data="rows.jsonl", name="mixed",
                      text=MIXED.replace("CHECK", check))
    sample, = load_samples(path)
    assert "12" not in json.dumps(render(sample))
    out = tmp_path / "results"
    for said, verdict in ((right, "pass"), (wrong, "fail")):
        answer = tmp_path / "answer.md"
        answer.write_text(said + "\n", encoding="utf-8")
        result = run_attempt(sample, "m", get_driver("replay"), str(answer),
                             settings_for(sample, Overrides()), out, agent="replay").result
        assert result["result"] == verdict, (said, result["notes"])
