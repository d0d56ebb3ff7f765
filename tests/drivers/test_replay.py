"""The replay driver end to end through the CLI: scored answers, null metrics, per-check detail."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from benchrig.resultio.files import validate
from tests.conftest import SOLUTIONS, answer_file, cli_call, fenced

GOOD = (SOLUTIONS / "lru-cache.py").read_text()


def only_result(results_dir: Path) -> dict:  # type: ignore[type-arg]
    files = [p for p in results_dir.glob("*.json")]
    assert len(files) == 1, files
    data = json.loads(files[0].read_text())
    validate(data)
    return data  # type: ignore[no-any-return]


def replay(tmp_path: Path, results_dir: Path, text: str, task: str = "lru-cache"):  # type: ignore[no-untyped-def]
    path = answer_file(tmp_path, text)
    return cli_call("run", task, "-m", "oracle", "-d", "replay", "-p", str(path),
                    results_dir=results_dir)


def test_correct_solution_passes_with_all_checks(tmp_path: Path, results_dir: Path) -> None:
    ran = replay(tmp_path, results_dir, fenced(GOOD))
    assert ran.code == 0, ran.stderr
    result = only_result(results_dir)
    assert result["result"] == "pass" and result["pass_at_1"] is True
    assert result["checks"]["passed"] == result["checks"]["total"] == 2
    assert all(v is None for k, v in result["metrics"].items()
               if k not in ("tokens_per_s_floored", "check_s", "candidate_cpu_s"))
    assert result["code_source"] == "message"
    assert result["isolation"] in ("full", "degraded", "none")
    assert (results_dir / result["transcript_file"]).is_file()


def test_wrong_solution_fails_with_per_check_detail(tmp_path: Path, results_dir: Path) -> None:
    wrong = GOOD.replace("self.items.move_to_end(key)\n        return", "return")
    ran = replay(tmp_path, results_dir, fenced(wrong))
    assert ran.code == 1
    result = only_result(results_dir)
    assert result["result"] == "fail" and result["pass_at_1"] is False
    details = {d["name"]: d for d in result["checks"]["details"]}
    assert details["test_get_put_and_eviction"]["passed"] is False
    assert "assert" in details["test_get_put_and_eviction"]["message"]
    assert result["checks"]["total"] == 2


def test_prose_around_a_fenced_block_is_extracted(tmp_path: Path, results_dir: Path) -> None:
    text = fenced(GOOD, before="Sure, here is an LRU cache:\n\n",
                  after="\nIt uses an OrderedDict so both operations are O(1).\n")
    ran = replay(tmp_path, results_dir, text)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert only_result(results_dir)["result"] == "pass"


DOCSTRING = '''class LRUCache:
    """Least recently used first out. Usage:

    ```
    cache = LRUCache(2)
    cache.put(1, 1)
    ```
    """
'''


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["list-item", "docstring-fence", "both"])
def test_correct_code_passes_in_markdown_shapes(shape: str, tmp_path: Path,
                                                results_dir: Path) -> None:
    code = GOOD if shape == "list-item" else GOOD.replace("class LRUCache:\n", DOCSTRING)
    answer = fenced(code, before="Here it is:\n\n")
    if shape != "docstring-fence":
        answer = "1. The cache:\n\n" + textwrap.indent(answer, "   ") + "2. Both are O(1).\n"
    ran = replay(tmp_path, results_dir, answer)
    result = only_result(results_dir)
    assert ran.code == 0 and result["result"] == "pass", result["checks"]["details"]
    assert result["evidence"]["extraction"] == "fenced"


def test_code_only_inside_think_is_no_code(tmp_path: Path, results_dir: Path) -> None:
    ran = replay(tmp_path, results_dir, f"<think>\n{fenced(GOOD)}</think>\nI am not sure.")
    assert ran.code == 1
    result = only_result(results_dir)
    assert result["result"] == "fail"
    assert result["notes"] == "no code found in the response"
    assert result["checks"]["passed"] == 0


def test_missing_answer_file_is_a_usage_error(tmp_path: Path, results_dir: Path) -> None:
    ran = cli_call("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p",
                   str(tmp_path / "nope.md"), results_dir=results_dir)
    assert ran.code == 2
    assert "answer file not found" in ran.stderr
    assert list(results_dir.iterdir()) == []


def test_unknown_driver_lists_the_known_ones(results_dir: Path) -> None:
    ran = cli_call("run", "lru-cache", "-d", "nosuch", results_dir=results_dir)
    assert ran.code == 2
    assert "unknown driver 'nosuch'" in ran.stderr and "replay" in ran.stderr
