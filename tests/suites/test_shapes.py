"""The built-in attempt shapes as the runner calls them: a window ladder asks its driver for a
strict window at every step (a window past training is that step's failure), one answer does
not; and a driver that runs in process refuses a strict window past training before it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchrig.core import DriverError, DriverOutput, Metrics, Transcript
from benchrig.drivers import llamacpp
from benchrig.drivers.base import DriverRequest
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from benchrig.suites import BUILTIN
from benchrig.suites.base import Suite
from tests.conftest import TASKS


class Recording:
    """A runtime that answers every request with the code in its prompt, noting whether it
    was asked for a strict window."""

    name, kind = "recording", "runtime"

    def __init__(self) -> None:
        self.strict: list[bool] = []

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> DriverOutput:
        self.strict.append(request.strict_context)
        return DriverOutput(Transcript(answer="OK"), Metrics())


@pytest.mark.parametrize(("task_id", "strict"), [("context-needle", True),
                                                 ("bat-and-ball", False)])
def test_only_a_window_ladder_asks_for_a_strict_window(task_id: str, strict: bool,
                                                       tmp_path: Path) -> None:
    task = load_task(TASKS / f"{task_id}.md")
    driver = Recording()
    done = run_attempt(task, "m", driver, None, settings_for(task, Overrides()), tmp_path)
    assert done.result["suite"] == task.suite and done.result["result"] == "fail"
    assert driver.strict and set(driver.strict) == {strict}


class Loaded:
    """What llama.cpp's loader returns, as far as the window check reads it."""


@pytest.mark.parametrize("strict", [True, False])
def test_the_embedded_model_refuses_a_strict_window_past_training(
        strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llamacpp, "_load", lambda path, n_ctx, threads: (Loaded(), 0.1))
    monkeypatch.setattr(llamacpp, "trained_context", lambda llm: 8192)
    task = load_task(TASKS / "context-needle.md")
    settings = settings_for(task, Overrides(context_size=16384))
    request = DriverRequest(task.view(), (), "smollm2", None, settings, strict_context=strict)
    load: Any = llamacpp.LlamaCppDriver._loaded
    if strict:
        with pytest.raises(DriverError, match=r"n_ctx_seq \(16384\) > n_ctx_train \(8192\)"):
            load(request, Path("model.gguf"), 1)
    else:  # elsewhere a window past training only leaves unused room
        assert isinstance(load(request, Path("model.gguf"), 1)[0], Loaded)


def _broken(attempt: Any) -> Any:
    raise KeyError("a suite's own bug")


BROKEN = Suite("broken", _broken)


def test_a_suite_that_breaks_leaves_a_harness_error_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite's bug is BenchRig's failure, recorded as this attempt's harness error: the run
    goes on, as after a driver's bug."""
    from dataclasses import replace

    monkeypatch.setitem(BUILTIN, "broken", f"{__name__}:BROKEN")
    task = replace(load_task(TASKS / "bat-and-ball.md"), suite="broken")
    done = run_attempt(task, "m", Recording(), None, settings_for(task, Overrides()),
                       tmp_path)
    assert (done.result["result"], done.result["error"]["kind"]) == ("error", "harness")
    assert done.result["error"]["message"] == (
        "the broken suite failed: KeyError: \"a suite's own bug\"")
