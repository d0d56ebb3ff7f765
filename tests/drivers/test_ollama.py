"""The ollama driver against a loopback server replaying NDJSON shaped as protocols.md §5.

Ollama cannot run here; every stream below follows the documented /api/chat shape, and
the driver's figures are checked against the counters inside those streams.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import DriverError, UsageError
from benchrig.drivers.base import DriverRequest
from benchrig.drivers.ollama import OllamaDriver, ollama_url, placement
from benchrig.prompt import render
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS, benchrig, cli_call
from tests.helpers.loopback import Loopback, Reply, ndjson
from tests.helpers.ollama import (
    ANSWER_LINES,
    FINAL,
    GOOD,
    MODEL,
    THINKING,
    done,
    line,
    rechunk,
    request,
    routes,
)


def only_result(folder: Path) -> dict[str, Any]:
    (path,) = folder.glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text())
    validate(data)
    return data


@pytest.mark.slow
def test_full_attempt_through_run_sh_with_ollama_host(results_dir: Path) -> None:
    chat = Reply(rechunk(ndjson(*ANSWER_LINES, done()), 7), content_type="application/x-ndjson",
                 pause_s=0.002)
    loaded = [{"name": f"{MODEL}:latest", "model": f"{MODEL}:latest", "size": 6654289920,
               "size_vram": 0, "context_length": 1024 * 12 + 2048}]
    with Loopback(routes(chat, loaded=loaded)) as server:
        host = server.url.removeprefix("http://")  # OLLAMA_HOST may omit the scheme
        ran = benchrig("lru-cache", f"{MODEL}:latest", "ollama", results_dir=results_dir,
                       command=[str(ROOT / "scripts" / "run.sh")], env={"OLLAMA_HOST": host})
        chats = server.posted("/api/chat")
    assert ran.code == 0, ran.stdout + ran.stderr
    result = only_result(results_dir)
    assert result["result"] == "pass" and result["checks"]["passed"] == 2
    m = result["metrics"]
    # token counts and prefill speed are the server's, exactly
    assert (m["output_tokens"], m["output_tokens_source"]) == (282, "server")
    assert (m["input_tokens"], m["input_tokens_source"]) == (26, "server")
    assert m["prefill_tokens_per_s"] == pytest.approx(26 / 0.342546)
    engine = m["engine"]
    assert {k: engine[k] for k in FINAL} == FINAL  # kept raw
    assert engine["eval_per_second"] == pytest.approx(282 / 4.535599)
    assert engine["placement"] == "cpu" and engine["ps"]["context_length"] == 14336
    assert "warmup" not in engine and m["load_time_s"] is None  # loaded with this num_ctx
    # our own clock: thinking first, then the answer, decode rate over our span
    assert 0 < m["ttft_ms"] < m["answer_ttft_ms"] < m["wall_s"] * 1000
    assert m["think_time_s"] == pytest.approx((m["answer_ttft_ms"] - m["ttft_ms"]) / 1000)
    assert m["thinking_chars"] == len("".join(THINKING))
    assert m["tokens_per_s"] == pytest.approx(282 / (m["wall_s"] - m["ttft_ms"] / 1000))
    # Ollama is not BenchRig's own run of the model: no price table, no guessed 0
    assert (m["cost_usd"], m["cost_source"]) == (None, "no price table")
    # what was sent: the model's default think (coding), the window and the budget
    (sent,) = chats
    assert "think" not in sent and sent["stream"] is True
    # qwen3 is a thinking model: 12 × the budget, and a window that holds it and the prompt
    assert sent["options"] == {"num_ctx": 1024 * 12 + 2048, "num_predict": 1024 * 12,
                               "temperature": 0, "seed": 0}
    assert result["settings"]["max_tokens_multiplier"] == 12
    assert result["settings"]["think"] is None and result["settings"]["think_capable"] is True
    assert result["environment"]["runtime"] == {"name": "ollama", "version": "0.13.5",
                                                "base_url": server.url}
    transcript = (results_dir / result["transcript_file"]).read_text().splitlines()
    answer = json.loads(transcript[-1])
    assert answer["text"] == GOOD and answer["thinking"] == "".join(THINKING)


def test_thinking_model_gets_its_multiplied_budget_and_speed_turns_think_off() -> None:
    chat = Reply(ndjson(line("ok"), done()), content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server:
        from benchrig.orchestrate.runner import Overrides, settings_for

        spec = load_task(TASKS / "lru-cache.md")
        settings = settings_for(spec, Overrides(), model="qwen3:8b")
        OllamaDriver().run(DriverRequest(spec.view(), render(spec), MODEL, server.url, settings))
        from dataclasses import replace

        speed = replace(spec, suite="speed")
        out = OllamaDriver().run(DriverRequest(speed.view(), render(speed), MODEL, server.url,
                                               settings_for(speed, Overrides(), model="qwen3")))
        warmup, coding, fast = server.posted("/api/chat")
    assert coding["options"]["num_predict"] == 1024 * 12 and "think" not in coding
    # the window grew to hold the budget and a prompt (loaded first, untimed)
    assert warmup["options"]["num_ctx"] == coding["options"]["num_ctx"] == 1024 * 12 + 2048
    assert settings.context_size_source == "max_tokens + 2048"
    assert fast["think"] is False and fast["options"]["num_predict"] == 1024
    assert out.effective["think"] is False


def test_think_is_not_sent_to_a_model_without_the_capability() -> None:
    chat = Reply(ndjson(line("ok"), done()), content_type="application/x-ndjson")
    with Loopback(routes(chat, capabilities=("completion", "tools"))) as server:
        out = OllamaDriver().run(request(url=server.url, think=False))
        (sent,) = server.posted("/api/chat")
    assert "think" not in sent
    assert out.effective["think"] is None  # the runner keeps what was asked
    assert out.effective["think_capable"] is False


def test_changed_window_gets_an_untimed_warm_up_first() -> None:
    chat = Reply(ndjson(line("ok"), done()), content_type="application/x-ndjson")
    loaded = [{"name": "qwen3:latest", "model": "qwen3:latest", "size": 100, "size_vram": 40,
               "context_length": 2048}]
    with Loopback(routes(chat, loaded=loaded)) as server:
        out = OllamaDriver().run(request(url=server.url, context_size=8192))
        warm, timed = server.posted("/api/chat")
    assert warm == {"model": MODEL, "messages": [], "stream": False,
                    "options": {"num_ctx": 8192}}
    assert timed["options"]["num_ctx"] == 8192
    assert out.metrics.load_time_s is not None and out.metrics.load_time_s > 0
    assert out.metrics.engine["warmup"] == {"done_reason": "load"}
    assert out.metrics.engine["placement"] == "split"


def test_tool_call_chunk_counts_as_the_first_answer_token() -> None:
    call = {"function": {"name": "read", "arguments": {"path": "a.py"}}}
    stream = ndjson(line(thinking="I should read it"),
                    line(tool_calls=[call]) | {"message": {"role": "assistant", "content": "",
                                                           "tool_calls": [call]}},
                    done(eval_count=7, eval_duration=70000000))
    chat = Reply(stream, content_type="application/x-ndjson", pause_s=0.05)
    with Loopback(routes(chat)) as server:
        out = OllamaDriver().run(request(url=server.url))
    assert out.transcript.tool_calls == (call,)  # arguments stay an object, as sent
    assert out.transcript.answer == "" and out.transcript.finish_reason == "stop"
    m = out.metrics
    assert m.ttft_ms is not None and m.answer_ttft_ms is not None
    # the answer is only a tool call, yet it has an answer time: after the thinking
    assert m.answer_ttft_ms >= m.ttft_ms
    assert (m.output_tokens, m.input_tokens, m.prefill_tokens_per_s) == (7, None, None)
    assert m.engine["eval_per_second"] == pytest.approx(100.0)


@pytest.mark.slow
def test_done_reason_length_is_a_truncated_coding_answer(results_dir: Path) -> None:
    cut_code = line("```python\nclass LRUCache:\n    def __init__(self, cap")
    chat = Reply(ndjson(line("Sure:\n"), cut_code, done("length", eval_count=16,
                                                       eval_duration=1)),
                 content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server:
        ran = cli_call("run", "lru-cache", "-m", MODEL, "-d", "ollama", "-p", server.url,
                       "--max-tokens", "16", results_dir=results_dir)
    result = only_result(results_dir)
    assert ran.code == 1
    assert (result["result"], result["finish_reason"], result["truncated"]) == (
        "fail", "length", True)
    assert result["notes"] == ("Response truncated at num_predict=16 before the code was "
                               "complete")
    assert result["metrics"]["output_tokens"] == 16


@pytest.mark.slow
@pytest.mark.parametrize(("chat", "message"), [
    (Reply(rechunk(ndjson(line("Hi"), line(" there"), done()), 5)[:-3],
           content_type="application/x-ndjson", chunked=False),
     "was cut mid-line"),
    (Reply(ndjson(line("Hi"), line(" there")), content_type="application/x-ndjson"),
     "without its final (done) line"),
    (Reply(ndjson(line("Hi"), line(" there")), content_type="application/x-ndjson",
           complete=False), "was cut"),
    (Reply(ndjson(line("Hi"), {"error": "an error was encountered while running the model"}),
           content_type="application/x-ndjson"),
     "Ollama: an error was encountered while running the model"),
    (Reply.json({"error": "model requires more system memory (9.1 GiB) than is available"},
                500), "HTTP 500 from http://127.0.0.1:"),
    (Reply(ndjson(line("Hi"), {"message": "not an object", "done": False}, done()),
           content_type="application/x-ndjson"), "sent an item BenchRig cannot read"),
])
def test_broken_streams_are_infra_errors(chat: Reply, message: str) -> None:
    with Loopback(routes(chat)) as server, pytest.raises(DriverError) as caught:
        OllamaDriver().run(request(url=server.url))
    assert caught.value.kind == "infra"
    assert message in caught.value.message


def test_errors_become_result_files_through_the_cli(results_dir: Path, tmp_path: Path) -> None:
    """A server failing mid-run (preflight saw the model; it is gone when the attempt asks)."""
    table = routes(Reply())
    table[("GET", "/api/tags")] = Reply.json({"models": [{"name": "nope:latest"}]})
    table[("POST", "/api/show")] = Reply.json({"error": "model 'nope' not found"}, 404)
    with Loopback(table) as server:
        ran = cli_call("run", "lru-cache", "-m", "nope", "-d", "ollama", "-p", server.url,
                       results_dir=results_dir)
    result = only_result(results_dir)
    assert ran.code == 1 and "Traceback" not in ran.stderr
    assert result["result"] == "error" and result["error"]["kind"] == "infra"
    assert "model 'nope' not found" in result["error"]["message"]
    assert result["metrics"]["wall_s"] is None


def test_host_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert ollama_url(None) == "http://127.0.0.1:11434"
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11500")
    assert ollama_url(None) == "http://127.0.0.1:11500"
    monkeypatch.setenv("OLLAMA_HOST", "http://gpu-box")
    assert ollama_url(None) == "http://gpu-box:11434"
    assert ollama_url("http://h:1/") == "http://h:1"
    with pytest.raises(UsageError, match="base URL"):
        ollama_url("h:1")
    assert placement({"size": 10, "size_vram": 10}) == "gpu"
    assert placement({"size": 10}) is None
