"""An agent whose own prompt cannot fit the embedded model's window is an honest error naming
both sizes, before any model or agent starts; the overhead each driver states is the one its
real CLI sends (first request, counted with SmolLM2's tokenizer)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from benchrig.drivers import get_driver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.drivers.test_agent_clis import AGENTS, Ran, installed, ours, ran  # noqa: F401

OVERHEAD_TOLERANCE = 0.05  # the task's tokens are estimated; the rest must match


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_agent_too_big_for_the_window_is_not_run(name: str, tmp_path: Path) -> None:
    """qwen's 5,529-token prompt in a 4,096-token window (the default context size), the
    others squeezed by a window just below their prompt: the server would cut the prompt and
    the agent would run on half its instructions. It must be refused instead."""
    agent = AGENTS[name]
    installed(agent)
    overhead = importlib.import_module(f"benchrig.drivers.{name}").PROMPT_OVERHEAD_TOKENS
    task = load_task(TASKS / "lru-cache.md")
    settings = settings_for(task, Overrides(context_size=overhead))
    before = ours()
    done = run_attempt(task, "smollm2", get_driver(name), "local", settings,
                       tmp_path / "results", agent=name)
    validate(done.result)
    r = done.result
    assert r["result"] == "error" and r["error"]["kind"] == "infra", r.get("error")
    message = r["error"]["message"]
    assert f"{overhead} its own prompt" in message and f"{overhead}-token context window" in (
        message)
    assert r["metrics"]["load_time_s"] is None  # no model was loaded, no agent started
    assert ours() <= before


@pytest.mark.agent
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_the_stated_overhead_is_what_the_cli_sends(name: str, ran: Ran) -> None:  # noqa: F811
    llama_cpp = pytest.importorskip("llama_cpp")
    from benchrig.local.model import resolve_model

    tokenizer = llama_cpp.Llama(model_path=str(resolve_model("smollm2")), vocab_only=True,
                                verbose=False)

    def tokens(text: str) -> int:
        return len(tokenizer.tokenize(text.encode(), add_bos=False, special=False))

    first = ran.model.model_requests()[0]
    prompt = next(line for line in ran.sidecar if line["kind"] == "prompt")["messages"]
    task = "\n\n".join(m["content"] for m in prompt)
    measured = tokens(first.raw.decode()) - tokens(task)
    stated = importlib.import_module(f"benchrig.drivers.{name}").PROMPT_OVERHEAD_TOKENS
    assert abs(measured - stated) <= OVERHEAD_TOLERANCE * stated, (measured, stated)
