"""A pack's tests are trusted code: each way a record or a candidate got into them, tried as
the attack — helpers imported from the candidate, assertions that test nothing, a task id
that breaks out of the generated test, a gzip bomb."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from pathlib import Path

import pytest

from benchrig.checks.coding import run_tests
from benchrig.packs import PACK_FILE
from benchrig.packs.convert import PackError, humaneval, mbpp
from benchrig.packs.importer import import_suite
from benchrig.packs.source import read
from benchrig.spec import load_task

MAX_SOURCE_BYTES = 64 * 1024 * 1024  # benchrig.packs.source's cap

RECORD = {"task_id": "HumanEval/7", "entry_point": "add",
          "prompt": "def add(a, b):\n    \"\"\"a + b\"\"\"\n",
          "canonical_solution": "    return a + b\n",
          "test": "METADATA = {}\n\ndef check(candidate):\n    assert candidate(1, 2) == 3\n"}


@pytest.fixture(scope="module")
def humaneval_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("tasks")
    import_suite("humaneval", base=base)
    return base / "humaneval"


@pytest.mark.parametrize(("number", "hostile"), [
    (32, "def poly(xs, x):\n    return 0\n\ndef find_zero(xs):\n    return 0.0\n"),
    (38, "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"),
    (50, "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n"),
])
def test_helpers_come_from_the_prompt_not_from_the_candidate(humaneval_pack: Path, number: int,
                                                             hostile: str) -> None:
    """Identity helpers and no solution passed HumanEval 32, 38 and 50: the test used the
    candidate's `poly`, `encode_cyclic`, `encode_shift`."""
    task = load_task(humaneval_pack / f"humaneval-{number:03d}.md")
    report = run_tests(task, hostile)
    assert not report.all_passed, report.details
    assert "from solution import" in (task.test_source or "")
    imported = next(line for line in (task.test_source or "").splitlines()
                    if line.startswith("from solution import"))
    assert imported == f"from solution import {task.entry_points[0]}"


def test_assertions_that_never_touch_the_candidate_are_dropped(humaneval_pack: Path) -> None:
    """48 of HumanEval's per-assertion checks were `assert True, ...`: a pass for any stub."""
    meta = json.loads((humaneval_pack / PACK_FILE).read_text())
    assert sum(meta["checks"]["dropped"].values()) == 48
    tests = [test.read_text() for test in humaneval_pack.glob("*.test.py")]
    assert sum(text.count("\ndef test_") for text in tests) == 1154 - 48
    checks = [chunk.split("\n\n")[0] for text in tests
              for chunk in text.split("\ndef test_assert_")[1:]]
    assert not [c for c in checks if "assert True" in c]
    converted = mbpp({"task_id": 9, "text": "t", "code": "def f(x):\n    return x\n",
                      "test_list": ["assert f(1) == 1", "assert True", "assert 1 == 1"]})
    assert converted.dropped == 2 and converted.test.count("def test_assert_") == 1


@pytest.mark.parametrize("task_id", [
    'HumanEval"""\nimport os; os.system("touch PWNED")\n"""/1',
    "HumanEval'''\nimport os\n'''/1",
    "HumanEval\nimport os\n#/1",
    "../../etc/1",
    "HumanEval/" + "9" * 5000,
])
def test_a_task_id_cannot_become_code(task_id: str) -> None:
    """The id was spliced into the generated test's docstring: `verify` then ran the rest
    of it on the host."""
    with pytest.raises(PackError, match="not a HumanEval record"):
        humaneval({**RECORD, "task_id": task_id})
    with pytest.raises(PackError):
        humaneval({**RECORD, "entry_point": "add\nimport os"})
    with pytest.raises(PackError):
        mbpp({"task_id": "1\nimport os", "text": "t", "code": "def f(x):\n    return x\n",
              "test_list": ["assert f(1) == 1"]})


def test_the_generated_docstring_is_a_literal() -> None:
    converted = humaneval(RECORD)
    first = converted.test.splitlines()[0]
    assert first == repr("HumanEval/7's own test, check(candidate), one check per assertion.")


def test_a_gzip_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    bomb = tmp_path / "HumanEval.jsonl.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    block = b" " * (1 << 20)
    with bomb.open("wb") as out:
        for _ in range(MAX_SOURCE_BYTES // len(block) * 3):  # 3x the cap, decompressed
            out.write(packer.compress(block))
        out.write(packer.flush())
    with gzip.open(bomb) as unpacked:
        assert unpacked.read(10) == b" " * 10
    tracemalloc.start()
    try:
        with pytest.raises(PackError, match="refused"):
            read(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_SOURCE_BYTES  # it read at most the cap (+1 byte), never it all
