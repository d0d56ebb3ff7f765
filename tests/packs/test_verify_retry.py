"""verify replays an answer once more when BenchRig itself failed (a harness error, such as a
sandbox that did not start), names it in the table, and never retries the answer's own
failure."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchrig.packs import verify
from benchrig.spec import load_task
from tests.conftest import TASKS

HARNESS = {"result": "error", "error": {"kind": "harness", "message": "the sandbox did not "
           "start: candidate process was killed by SIGKILL"}, "checks": {"passed": 0,
           "total": 2}, "notes": "harness", "isolation": "full"}
FAILED = {"result": "fail", "checks": {"passed": 0, "total": 2}, "notes": "0/2",
          "isolation": "full"}


def replayed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
             outcomes: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    calls: list[int] = []

    def fake(*args: Any, **kwargs: Any) -> SimpleNamespace:
        calls.append(1)
        return SimpleNamespace(result=outcomes[len(calls) - 1])

    monkeypatch.setattr(verify, "run_attempt", fake)
    answer = tmp_path / "answer.md"
    answer.write_text("```python\nx = 1\n```\n")
    result = verify._replayed(load_task(TASKS / "lru-cache.md"), "broken", answer,
                              None, tmp_path, None)  # type: ignore[arg-type]
    return result, len(calls)


def test_a_harness_error_is_replayed_once_and_named(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    result, calls = replayed(monkeypatch, tmp_path, [HARNESS, FAILED])
    assert calls == 2 and result["result"] == "fail"
    assert "killed by SIGKILL" in result[verify.RETRIED]


def test_a_second_harness_error_stays_an_error(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    result, calls = replayed(monkeypatch, tmp_path, [HARNESS, HARNESS])
    assert calls == 2 and result["result"] == "error"


def test_the_answers_own_failure_is_not_replayed(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    result, calls = replayed(monkeypatch, tmp_path, [FAILED])
    assert calls == 1 and verify.RETRIED not in result


def test_the_table_names_a_replayed_answer() -> None:
    row = verify.Row("broken", "fail", 1, {"fail": 1}, 0, 2, 0.1, (),
                     ("humaneval-080: the sandbox did not start",))
    table = verify.Verification("humaneval", (row,), ("full",), Path("x")).table()
    assert "replayed once more after a harness error" in table and "humaneval-080" in table
    assert row.ok
