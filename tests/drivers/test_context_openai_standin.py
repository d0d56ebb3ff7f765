"""The context suite through the openai driver against a scripted server with a fixed window and
a `/extras/tokenize` route (as llama-cpp-python's): the server's tokenizer fills the prompts, no
window is warmed up, a prompt longer than the server's window is that window's failure with
the server's message, and memory the server does not report is null with a reason."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from benchrig.config import Config
from benchrig.drivers.openai import OpenAIDriver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.loopback import Loopback, Reply
from tests.helpers.openai import USAGE, chunk, stream_reply

SERVER_WINDOW = 4096


def words(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def tokenize(body: Any) -> Reply:
    return Reply.json({"tokens": list(range(words(str(body["input"]))))})


def chat(body: Any) -> Reply:
    prompt = str(body["messages"][-1]["content"])
    used = words(prompt) + 12  # the chat template's own tokens
    if used > SERVER_WINDOW:
        return Reply.json({"error": {"message": f"Requested tokens ({used}) exceed context "
                                                f"window of {SERVER_WINDOW}"}}, 400)
    code = re.search(r"code is (\d+)", prompt)
    answer = code.group(1) if code else "OK"
    return stream_reply(chunk({"role": "assistant", "content": None}),
                        chunk({"content": answer}), chunk({}, "stop"),
                        chunk(None, usage={**USAGE, "prompt_tokens": used}), "[DONE]")


def test_a_fixed_window_server_fills_by_its_tokenizer_and_fails_only_past_its_window(
        tmp_path: Path) -> None:
    text = (TASKS / "context-needle.md").read_text(encoding="utf-8")
    path = tmp_path / "context-small.md"
    path.write_text(text.replace("id: context-needle", "id: context-small")
                    .replace("steps: [512, 1024, 2048, 4096, 8192]", "steps: [512, 1024, 8192]"),
                    encoding="utf-8")
    task = load_task(path)
    folder = tmp_path / "results"
    folder.mkdir()
    routes = {("POST", "/extras/tokenize"): tokenize, ("POST", "/v1/chat/completions"): chat}
    with Loopback(routes) as server:
        settings = settings_for(task, Overrides(), model="m", config=Config())
        result = run_attempt(task, "m", OpenAIDriver(), f"{server.url}/v1", settings,
                             folder).result
        posted = server.posted("/v1/chat/completions")
    steps = result["evidence"]["context"]["steps"]
    assert [s["window"] for s in steps] == [512, 1024, 8192]
    assert len(posted) == 3  # no warm-up: the server keeps its window
    for step in steps[:2]:
        assert step["passed"] is True
        assert step["fill_method"] == "server tokenizer" and not step["fill_whole_prompt"]
        assert step["prompt_tokens_counted"] == step["prompt_tokens_target"]
        assert step["prompt_tokens_actual"] == step["prompt_tokens_counted"] + 12
        assert step["warmup"] == {"ran": False, "reason": step["warmup"]["reason"],
                                  "load_time_s": None, "wall_s": None}
        assert step["context_size"] is None  # the server did not say its window
        assert step["memory"]["reason"] == "the runtime reports no memory figures"
    past = steps[2]
    assert past["passed"] is False and past["error"]["kind"] == "infra"
    assert "exceed context window of 4096" in past["error"]["message"]
    assert result["checks"]["passed"] == 2 and result["checks"]["total"] == 3
    assert result["evidence"]["context"]["spill_note"] == "n/a: placement unknown"
