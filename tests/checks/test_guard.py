"""A check that crashes on the model's text fails (counted, with the reason), never an
`error/harness` outside the pass rate; every check runs under the attempt's deadline."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from benchrig.checks import judge as judge_module
from benchrig.checks.guard import CheckTimeout, Unreadable, model_text, within_deadline
from benchrig.checks.judge import judge
from benchrig.core.check import CheckContext, check
from benchrig.core.deadline import Deadline
from benchrig.core.errors import counts_against_model
from benchrig.core.settings import Settings
from benchrig.core.transcript import Transcript
from benchrig.drivers.replay import ReplayDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import TASKS


def test_model_text_turns_any_exception_into_unreadable_with_the_reason() -> None:
    with pytest.raises(Unreadable) as caught, model_text("the answer"):
        int("9" * 5000)
    assert caught.value.reason.startswith("the answer could not be read: ValueError: ")
    with pytest.raises(Unreadable) as inner, model_text("outer"), model_text("inner"):
        raise RecursionError("deep")
    assert inner.value.reason == "inner could not be read: RecursionError: deep"


SLOW = "slow-check-for-test"
SLOW_S = 30.0  # what the slow check would take if nothing cut it


@check(SLOW)
def slow_check(task: Any, transcript: Transcript, settings: Settings,
               context: CheckContext) -> Any:
    time.sleep(SLOW_S)


@check("unreadable-for-test")
def crashing_check(task: Any, transcript: Transcript, settings: Settings,
                   context: CheckContext) -> Any:
    with model_text("the answer"):
        json.loads("[" * 100_000)


def task_with(kind: str) -> Any:
    task = load_task(TASKS / "bat-and-ball.md")
    from dataclasses import replace
    from types import MappingProxyType

    return replace(task, check=MappingProxyType({"type": kind}))


def test_a_check_runs_under_the_attempt_s_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_module, "find_check", lambda name: slow_check)
    began = time.perf_counter()
    with pytest.raises(CheckTimeout):
        judge(task_with(SLOW), Transcript(answer="5"), Settings(),
              CheckContext(Deadline(0.2), None))
    # cut, not waited out: a relation to the check's own time, not a figure a busy
    # machine can miss (issue 23)
    assert time.perf_counter() - began < SLOW_S


def test_a_check_past_the_deadline_is_a_timeout_counted_against_the_model(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(judge_module, "find_check", lambda name: slow_check)
    task = load_task(TASKS / "bat-and-ball.md")
    settings = settings_for(task, Overrides())
    from dataclasses import replace

    answer = tmp_path / "answer.md"
    answer.write_text("Final answer: 5", encoding="utf-8")
    result = run_attempt(task, "attacker", ReplayDriver(), str(answer),
                         replace(settings, timeout_s=0.3), tmp_path).result
    assert result["result"] == "error" and result["error"]["kind"] == "timeout"
    assert result["error"]["phase"] == "checking" and counts_against_model(result)


def test_an_unreadable_answer_fails_the_check_it_names(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setattr(judge_module, "find_check", lambda name: crashing_check)
    verdict = judge(task_with("unreadable-for-test"), Transcript(answer="x"), Settings())
    assert verdict.result == "fail"
    (detail,) = verdict.details
    assert detail.name == "unreadable-for-test" and not detail.passed
    assert "RecursionError" in detail.message and "unreadable" in verdict.evidence


def test_within_deadline_hands_back_the_value_and_the_exception() -> None:
    assert within_deadline(Deadline(5), lambda: 42) == 42
    assert within_deadline(None, lambda: 7) == 7
    with pytest.raises(KeyError):
        within_deadline(Deadline(5), lambda: {}["missing"])
