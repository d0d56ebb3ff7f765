"""Task files: every bundled task validates; malformed ones are refused, naming file and field."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchrig.core.errors import TaskError
from benchrig.spec import load_task, load_tasks, task_paths
from tests.conftest import TASKS, benchrig, cli_call

GOOD = """---
id: {id}
suite: coding
language: python
difficulty: easy
tags: [demo]
timeout_s: {timeout}
entry_point: f
---

# Task: Demo

Write `f()` returning 1.
"""
TEST = "from solution import f\n\n\ndef test_one():\n    assert f() == 1\n"


def write_task(folder: Path, name: str, text: str, tests: str | None = TEST) -> Path:
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    if tests is not None:
        (folder / f"{name}.test.py").write_text(tests, encoding="utf-8")
    return path


def test_every_bundled_task_validates() -> None:
    tasks = load_tasks(task_paths([], base=TASKS))
    assert {t.id for t in tasks} >= {"lru-cache", "flatten-dict", "merge-intervals",
                                      "valid-brackets"}
    for task in tasks:
        assert task.path.name == f"{task.id}.md"
        assert task.task_hash.startswith("sha256:")


def test_prompt_body_never_contains_the_tests() -> None:
    from benchrig.prompt import render

    for task in load_tasks(task_paths([], base=TASKS)):
        if task.test_source is None:
            continue
        text = "\n".join(m["content"] for m in render(task))
        for name in task.test_names:
            assert name not in text
        assert "assert" not in text


def test_good_task_loads(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path, "demo", GOOD.format(id="demo", timeout=10)))
    assert task.entry_points == ("f",)
    assert task.test_names == ("test_one",)
    assert task.title == "Demo"


@pytest.mark.parametrize(
    ("name", "text", "tests", "expected"),
    [
        ("no-id", GOOD.format(id="x", timeout=10).replace("id: x\n", ""), TEST,
         "no-id.md: id: required field is missing"),
        ("other", GOOD.format(id="not-other", timeout=10), TEST,
         "other.md: id: 'not-other' does not match the file name 'other'"),
        ("types", GOOD.format(id="types", timeout="ten"), TEST,
         "types.md: timeout_s: 'ten' is not of type 'integer'"),
        ("notests", GOOD.format(id="notests", timeout=10), None,
         "notests.md: tests: notests.test.py is missing"),
        ("yaml", GOOD.format(id="yaml", timeout=10).replace("tags: [demo]", "tags: [demo"), TEST,
         "yaml.md: frontmatter: line"),
        ("badtest", GOOD.format(id="badtest", timeout=10), "def test_x(:\n",
         "badtest.test.py: line 1:"),
        ("answered", GOOD.format(id="answered", timeout=10).replace(
            "entry_point: f", "entry_point: f\ncheck: {type: final_answer, accept: ['1']}"),
         TEST, "answered.md: check.type: coding tasks are checked by their tests"),
        ("rtests", GOOD.format(id="rtests", timeout=10).replace("suite: coding", "suite: reasoning")
         .replace("entry_point: f", "check: {type: tests}"), None,
         "rtests.md: tests: rtests.test.py is missing"),
        ("typo", GOOD.format(id="typo", timeout=10).replace("tags:", "tagz: []\ntags:"), TEST,
         "typo.md: tagz: unknown field"),
    ],
)
def test_malformed_task_names_file_and_field(tmp_path: Path, name: str, text: str,
                                              tests: str | None, expected: str) -> None:
    path = write_task(tmp_path, name, text, tests)
    with pytest.raises(TaskError) as caught:
        load_task(path)
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems


@pytest.mark.slow
def test_cli_refuses_bad_task_with_exit_2_and_writes_nothing(tmp_path: Path,
                                                              results_dir: Path) -> None:
    path = write_task(tmp_path, "broken", GOOD.format(id="broken", timeout="ten"))
    answer = tmp_path / "answer.md"
    answer.write_text("def f():\n    return 1\n")
    for args in (["validate", str(path)],
                 ["run", str(path), "-m", "x", "-d", "replay", "-p", str(answer)]):
        ran = cli_call(*args, results_dir=results_dir)
        assert ran.code == 2, ran
        assert f"{path}: timeout_s: 'ten' is not of type 'integer'" in ran.stderr
        assert "Traceback" not in ran.stderr
    assert list(results_dir.iterdir()) == []


def test_validate_accepts_the_bundled_tasks(results_dir: Path) -> None:
    ran = cli_call("validate", results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    count = len(list(TASKS.glob("*.md")))
    assert f"{count} task(s) valid" in ran.stdout


def test_copied_task_folder_validates(tmp_path: Path) -> None:
    folder = tmp_path / "pack"
    shutil.copytree(TASKS, folder)
    assert len(load_tasks(task_paths([str(folder)]))) == len(list(TASKS.glob("*.md")))



def test_a_task_check_is_validated_by_its_own_check_in_a_fresh_interpreter(
        tmp_path: Path) -> None:
    """Nothing registers on import: loading a task finds its check type by name and runs that
    check's validator, even in a fresh interpreter where nothing loaded the checks first. A
    pattern with an unbounded gap is refused by the regex validator, never accepted unseen;
    an unknown type is refused naming the known ones."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    source = (TASKS / "mislabeled-boxes.md").read_text(encoding="utf-8")
    gap = tmp_path / "mislabeled-boxes.md"
    gap.write_text(source.replace(r"'\bbox (?:1|one)\b'", r"'\bbox .* one\b'", 1),
                   encoding="utf-8")
    unknown = tmp_path / "unknown" / "mislabeled-boxes.md"
    unknown.parent.mkdir()
    unknown.write_text(source.replace("type: regex", "type: vibes", 1), encoding="utf-8")
    probe = ("import sys\nfrom pathlib import Path\nfrom benchrig.core.errors import TaskError\n"
             "from benchrig.spec import load_task\n"
             "for name in sys.argv[1:]:\n"
             "    try:\n        load_task(Path(name))\n"
             "    except TaskError as exc:\n        print('\\n'.join(exc.problems))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(gap), str(unknown)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert f"{gap}: check.subjects[0]: " in done.stdout and "unbounded gap" in done.stdout
    assert (f"{unknown}: check.type: no check 'vibes' is registered (known: choices, "
            "declension, exact_or_contains, final_answer, needle, regex, summary, "
            "tests, tool_calls)") in done.stdout


# Nine aliases of nine aliases… of a list of nine: 9**9 (387 million) values in 610 bytes.
BOMB = "---\nid: bomb\n" + "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]\n" for n in range(1, 9)) + "---\n\nHi.\n"


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path: Path, results_dir: Path) -> None:
    assert len(BOMB.encode()) <= 610
    path = write_task(tmp_path, "bomb", BOMB, tests=None)
    ran = benchrig("validate", str(path), results_dir=results_dir, timeout=60)  # a hang fails
    assert ran.code == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert f"{path}: frontmatter: YAML aliases expand to more than 100,000 values" in ran.stderr


def test_a_yaml_alias_inside_itself_is_refused(tmp_path: Path) -> None:
    path = write_task(tmp_path, "loop", GOOD.format(id="loop", timeout=5).replace(
        "tags: [demo]", "tags: &t [demo, *t]"))
    with pytest.raises(TaskError) as refused:
        load_task(path)
    assert refused.value.problems == [
        f"{path}: frontmatter: a YAML alias refers to a value that contains it"]


def test_aliases_that_stay_small_still_load(tmp_path: Path) -> None:
    """A value repeated with `&id001`/`*id001`, as yaml.dump writes it, is no bomb."""
    text = GOOD.format(id="small", timeout=5).replace("id: small", "id: &id001 small").replace(
        "entry_point: f", "entry_point: *id001")
    assert "*id001" in text
    task = load_task(write_task(tmp_path, "small", text))
    assert task.frontmatter["entry_point"] == task.id == "small"


def test_a_task_file_that_is_a_fifo_or_a_device_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    for path, kind in ((fifo, "a FIFO"), (tmp_path / "zero.md", "a device")):
        with pytest.raises(TaskError) as refused:
            load_task(path)
        assert refused.value.problems == [f"{path}: {kind}, not a regular file"]


def test_a_frontmatter_too_long_to_build_is_refused(tmp_path: Path) -> None:
    """16 MiB of `[1, 1, …]` would be millions of PyYAML objects (GBs): refused by its size."""
    long = GOOD.format(id="long", timeout=5).replace(
        "tags: [demo]", "tags: [demo]\nx: [" + "1," * (1 << 20) + "1]")
    path = write_task(tmp_path, "long", long)
    with pytest.raises(TaskError) as refused:
        load_task(path)
    (problem,) = refused.value.problems
    assert problem.startswith(f"{path}: frontmatter: ") and "over the cap of 262,144" in problem


@pytest.mark.parametrize("depth", [500, 990])
def test_frontmatter_nested_too_deep_is_refused_not_a_crash(tmp_path: Path, depth: int) -> None:
    """libyaml stops at 1000 levels; PyYAML's constructor and the checks recurse in Python
    and stopped sooner, with a RecursionError out of `validate`."""
    path = write_task(tmp_path, "deep", GOOD.format(id="deep", timeout=5).replace(
        "tags: [demo]", "tags: [demo]\nx: " + "[" * depth + "]" * depth))
    with pytest.raises(TaskError) as refused:
        load_task(path)
    assert refused.value.problems == [f"{path}: frontmatter: nested more than 64 deep"]
