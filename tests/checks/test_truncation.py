"""`truncated` (the token limit cut the answer off before it was right) in the fast lane: every
answer-scored check flags it, tool turns included, and the report counts tool_use truncated
runs; a thinking model's tool turns get the multiplied budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig.checks.judge import judge
from benchrig.config import Config
from benchrig.core.measurements import Metrics
from benchrig.core.settings import Settings
from benchrig.core.toolcase import ToolReply
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.base import DriverRequest
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.report.scorecard import suite_card
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.toolcases import oracle


def verdict_of(task_id: str, answer: str, finish: str | None) -> Any:
    task = load_task(TASKS / f"{task_id}.md")
    return judge(task, Transcript(answer=answer, finish_reason=finish), Settings(max_tokens=64))


@pytest.mark.parametrize(("task_id", "cut", "right"), [
    ("bat-and-ball", "The ball costs x and the bat costs x + 100, so 2x + 100 = 1",
     "Final answer: 5"),
    ("discount-tax", "After the discount the coat costs $110.50, then the coupon", "114.6"),
    ("set-probability", "Of the 30 students, 18 play soccer and", "The answer is 1/6."),
    ("mislabeled-boxes", "Box 1 cannot hold apples, because",
     "Box 1: Oranges, Box 2: Apples and Oranges, Box 3: Apples"),
])
def test_an_answer_cut_off_at_the_token_limit_is_truncated(task_id: str, cut: str,
                                                          right: str) -> None:
    cut_off = verdict_of(task_id, cut, "length")
    assert cut_off.result == "fail" and cut_off.truncated and not cut_off.truncated_thinking
    assert cut_off.notes.startswith("Response truncated at num_predict=64 before the answer")
    assert not verdict_of(task_id, cut, "stop").truncated  # a normal stop: just wrong
    assert not verdict_of(task_id, cut, None).truncated  # unknown (replay): not claimed
    finished = verdict_of(task_id, right, "length")  # right at the limit: passed, no flag
    assert finished.result == "pass" and not finished.truncated


def test_a_polish_answer_cut_off_is_truncated() -> None:
    v = verdict_of("polish-declension", "Mianownik: piękna książka\nDopełniacz:", "length")
    assert v.result == "fail" and v.truncated and "Response truncated" in v.notes


class CutTurns:
    """A driver whose every tool turn stops at the token limit with a half-written reply."""

    name = "cut"
    kind = "runtime"

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> DriverOutput:
        return DriverOutput(Transcript(answer=""), Metrics())

    def tool_turn(self, request: DriverRequest, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]]) -> ToolReply:
        self.budget = request.settings.max_tokens
        return ToolReply(text="<think>The user wants the weather, so I should call",
                         calls=(), finish_reason="length")


def test_a_tool_turn_cut_off_by_its_budget_is_truncated_and_counted(tmp_path: Path) -> None:
    task = load_task(TASKS / "tool-select-weather.md")
    result = run_attempt(task, "m", CutTurns(), None, settings_for(task, Overrides()),
                         tmp_path).result
    assert result["result"] == "fail" and result["truncated"] is True
    assert "turn 1 stopped at the token limit" in result["notes"]
    assert suite_card("tool_use", [result]).truncated == 1  # tool_use_truncated_runs


def test_a_tool_turn_that_fails_without_being_cut_is_not_truncated() -> None:
    task = load_task(TASKS / "tool-select-weather.md")
    reply = {"text": "I cannot check the weather.", "calls": [], "finish_reason": "stop"}
    v = judge(task, Transcript(answer="", tool_turns=(reply,)), Settings())
    assert v.result == "fail" and not v.truncated
    cut = {**reply, "finish_reason": "length"}
    assert judge(task, Transcript(answer="", tool_turns=(cut,)), Settings()).truncated
    passed = {"text": "", "calls": oracle("tool-select-weather")["turns"][0]["tool_calls"],
              "finish_reason": "length"}  # complete at the limit: not cut before it was right
    done = judge(task, Transcript(answer="", tool_turns=(passed,)), Settings())
    assert done.result == "pass" and not done.truncated


def test_a_thinking_model_gets_the_multiplied_budget_in_tool_turns(tmp_path: Path) -> None:
    task = load_task(TASKS / "tool-select-weather.md")
    config = Config(thinking_models=("qwen3",), thinking_token_multiplier=12)
    settings = settings_for(task, Overrides(), model="qwen3:8b", config=config)
    assert settings.max_tokens == 12 * int(task.frontmatter["max_tokens"])
    driver = CutTurns()
    run_attempt(task, "qwen3:8b", driver, None, settings, tmp_path)
    assert driver.budget == settings.max_tokens
