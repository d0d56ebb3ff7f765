"""A reasoning task file is refused before anything runs when its check cannot work: missing
or unquoted expected answer, broken or unbounded patterns, patterns that reject the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchrig.core.errors import TaskError
from benchrig.spec import load_task
from tests.conftest import cli_call

HEAD = """---
id: t
suite: reasoning
language: en
difficulty: easy
tags: [demo]
timeout_s: 10
"""


def problems(tmp_path: Path, frontmatter: str) -> list[str]:
    path = tmp_path / "t.md"
    path.write_text(f"{HEAD}{frontmatter}---\n\nWhat is 6 × 7?\n", encoding="utf-8")
    with pytest.raises(TaskError) as caught:
        load_task(path)
    return [p.removeprefix(f"{path}: ") for p in caught.value.problems]


def test_an_answer_check_needs_a_quoted_expected_answer(tmp_path: Path) -> None:
    assert problems(tmp_path, "check:\n  type: final_answer\n") == [
        "expected: required field is missing"]
    # YAML reads an unquoted 11:20 as the number 680: refused, not silently compared, and
    # the message says how to write it
    assert problems(tmp_path, "expected: 11:20\ncheck:\n  type: final_answer\n") == [
        'expected: 11:20 is read by YAML as the number 680 (base 60); quote it: "11:20"']


def test_patterns_must_compile_be_bounded_and_accept_the_expected_answer(
        tmp_path: Path) -> None:
    found = problems(tmp_path, 'expected: "42"\ncheck:\n  type: final_answer\n'
                               "  accept: ['4[2']\n")
    assert found[0].startswith("check.accept[0]: '4[2' is not a valid regular expression")
    found = problems(tmp_path, 'expected: "42"\ncheck:\n  type: final_answer\n'
                               "  accept: ['24', '4 2']\n")
    assert found == ["check.accept: no pattern accepts the expected answer '42' "
                     "(patterns see it as '42')"]
    found = problems(tmp_path, 'expected: "Box 1: Apples"\ncheck:\n  type: regex\n'
                               "  patterns: ['box 1.*apples']\n")
    assert "unbounded gap" in found[0]


def test_check_keys_are_checked_per_type(tmp_path: Path) -> None:
    assert problems(tmp_path, 'expected: "42"\ncheck:\n  type: regex\n') == [
        "check.patterns: required field is missing"]
    assert problems(tmp_path, 'expected: "42"\ncheck:\n  type: final_answer\n  acept: [x]\n'
                    ) == ["check.acept: unknown field"]
    assert problems(tmp_path, 'expected: "42"\ncheck:\n  type: guess\n')[0].startswith(
        "check.type: no check 'guess' is registered (known: choices, declension, ")


def test_validate_reports_them_and_exits_2(tmp_path: Path, results_dir: Path) -> None:
    path = tmp_path / "t.md"
    path.write_text(f"{HEAD}check:\n  type: exact_or_contains\n---\n\nQ?\n", encoding="utf-8")
    ran = cli_call("validate", str(path), results_dir=results_dir)
    assert ran.code == 2
    assert f"{path}: expected: required field is missing" in ran.stderr
