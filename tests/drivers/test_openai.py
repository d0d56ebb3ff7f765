"""The openai driver: SSE shapes of protocols.md §6–§8 replayed on loopback, and broken servers
turned into result files through the CLI. The real embedded model is in test_openai_model.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.settings import Settings
from benchrig.drivers.openai import OpenAIDriver, request_body
from benchrig.local.embedded_server import free_port
from benchrig.resultio.files import validate
from tests.conftest import ROOT, TASKS, benchrig, cli_call
from tests.helpers.loopback import Loopback, Reply, sse
from tests.helpers.openai import GOOD, USAGE, chunk, rechunk, request, stream_reply

RECORDED = (ROOT / "tests" / "fixtures" / "streams" / "llama-cpp-python.sse").read_bytes()
TIMINGS = {"cache_n": 236, "prompt_n": 1, "prompt_ms": 30.958, "prompt_per_token_ms": 30.958,
           "prompt_per_second": 32.30, "predicted_n": 35, "predicted_ms": 661.064,
           "predicted_per_token_ms": 18.89, "predicted_per_second": 52.94}



def run(reply: Reply | Any, **kwargs: Any) -> tuple[Any, Loopback]:
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        return OpenAIDriver().run(request(f"{server.url}/v1", **kwargs)), server


def only_result(folder: Path) -> dict[str, Any]:
    (path,) = folder.glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text())
    validate(data)
    return data


def test_reasoning_tool_fragments_usage_after_finish_and_timings() -> None:
    reply = stream_reply(
        chunk({"role": "assistant", "content": None}),
        chunk({"reasoning_content": "Let me"}),
        chunk({"reasoning": " check — é"}),  # vLLM/Ollama spell it `reasoning`
        chunk({"content": "Reading."}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "read", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                               "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.py\"}"}}]}),
        chunk({}, "tool_calls", usage=None),
        chunk(None, usage=USAGE, timings=TIMINGS),
        "[DONE]", size=5)
    out, _ = run(reply)
    t, m = out.transcript, out.metrics
    assert (t.thinking, t.answer, t.finish_reason) == ("Let me check — é", "Reading.",
                                                       "tool_calls")
    assert [c["function"] for c in t.tool_calls] == [
        {"name": "read", "arguments": "{\"path\":\"a.py\"}"}, {"name": "ls", "arguments": "{}"}]
    assert [c["id"] for c in t.tool_calls] == ["call_1", "call_2"]
    # the usage chunk came after finish_reason and was still read
    assert (m.output_tokens, m.output_tokens_source) == (57, "server")
    assert (m.input_tokens, m.input_tokens_source) == (812, "server")
    assert m.prefill_tokens_per_s == 32.30
    assert m.engine["usage"] == USAGE and m.engine["timings"] == TIMINGS
    assert m.engine["usage_probe"] is None and m.engine["done_marker"] is True
    assert m.thinking_chars == len("Let me check — é")
    assert m.ttft_ms is not None and m.answer_ttft_ms is not None
    assert m.ttft_ms <= m.answer_ttft_ms <= m.wall_s * 1000  # type: ignore[operator]
    assert (m.cost_usd, m.cost_source) == (None, "no price table")  # never a guessed 0


def test_inline_think_tags_split_like_a_reasoning_field() -> None:
    separate, _ = run(stream_reply(chunk({"reasoning_content": "plan A"}),
                                   chunk({"content": "Answer"}), chunk({}, "stop"),
                                   chunk(None, usage=USAGE), "[DONE]"))
    inline, _ = run(stream_reply(chunk({"content": "<thi"}), chunk({"content": "nk>plan"}),
                                 chunk({"content": " A</th"}), chunk({"content": "ink>Answer"}),
                                 chunk({}, "stop"), chunk(None, usage=USAGE), "[DONE]", size=3))
    for out in (separate, inline):
        assert (out.transcript.thinking, out.transcript.answer) == ("plan A", "Answer")
        assert out.metrics.thinking_chars == 6
        assert out.metrics.answer_ttft_ms >= out.metrics.ttft_ms


def test_a_server_without_usage_counts_tokens_and_asks_for_the_prompt_count() -> None:
    probe = Reply.json({"choices": [{"message": {"content": "B"}, "finish_reason": "length"}],
                        "usage": {"prompt_tokens": 18, "completion_tokens": 1}})
    recorded = Reply(rechunk((RECORDED,), 11), content_type="text/event-stream")
    with Loopback({("POST", "/v1/chat/completions"):
                   lambda body: recorded if body.get("stream") else probe}) as server:
        out = OpenAIDriver().run(request(f"{server.url}/v1"))
        streamed, asked = server.posted("/v1/chat/completions")
    m = out.metrics
    assert out.transcript.answer == "Bonjour français"
    assert (m.output_tokens, m.output_tokens_source) == (5, "estimated")  # 5 text events
    assert (m.input_tokens, m.input_tokens_source) == (18, "server")
    assert m.prefill_tokens_per_s is None  # no server timings: unknown
    assert m.engine["usage_probe"] == {"prompt_tokens": 18, "completion_tokens": 1}
    assert asked["max_tokens"] == 1 and "stream" not in asked
    assert asked["messages"] == streamed["messages"]
    assert streamed["stream_options"] == {"include_usage": True}


@pytest.mark.slow
@pytest.mark.parametrize("odd", [
    {"choices": [{"index": 0, "delta": "text instead of an object"}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "x"}]}}]},
    {"choices": 7},
])
def test_malformed_events_are_infra_errors_not_tracebacks(odd: dict[str, Any]) -> None:
    from benchrig.core.errors import DriverError

    with pytest.raises(DriverError) as caught:
        run(stream_reply(chunk({"content": "a"}), odd, chunk({}, "stop"), "[DONE]"))
    assert caught.value.kind == "infra" and "cannot read" in caught.value.message


def test_think_switch_goes_only_to_thinking_models(monkeypatch: pytest.MonkeyPatch) -> None:
    thinking = request_body("qwen3", [], Settings(think=False, thinking_model=True))
    assert thinking["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in request_body("m", [], Settings(think=False,
                                                                        thinking_model=False))
    assert "chat_template_kwargs" not in request_body("qwen3", [], Settings(
        thinking_model=True))  # None: the model's own default


def test_settings_record_the_think_switch_that_was_sent() -> None:
    reply = stream_reply(chunk({"content": "x"}), chunk({}, "stop"), chunk(None, usage=USAGE),
                         "[DONE]")
    out, server = run(reply, model="qwen3", think=False, thinking_model=True)
    (sent,) = server.posted("/v1/chat/completions")
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert out.effective["think"] is False
    out, server = run(reply, think=True, thinking_model=False)
    assert "chat_template_kwargs" not in server.posted("/v1/chat/completions")[0]
    assert out.effective["think"] is None  # the runner keeps what was asked


@pytest.mark.slow
def test_api_key_comes_from_the_environment_and_is_never_recorded(
        monkeypatch: pytest.MonkeyPatch, results_dir: Path) -> None:
    secret = "sk-test-" + "7" * 24
    reply = stream_reply(chunk({"content": GOOD}), chunk({}, "stop"), chunk(None, usage=USAGE),
                         "[DONE]")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = benchrig("lru-cache", "my-model", "openai", f"{server.url}/v1",
                       results_dir=results_dir, command=[str(ROOT / "scripts" / "run.sh")],
                       env={"OPENAI_API_KEY": secret})
        headers = server.headers
    assert ran.code == 0, ran.stdout + ran.stderr
    assert headers[0]["authorization"] == f"Bearer {secret}"
    result = only_result(results_dir)
    assert result["result"] == "pass" and result["settings"]["api_key_env"] == "OPENAI_API_KEY"
    for path in results_dir.iterdir():
        assert secret not in path.read_text()


def short_task(tmp_path: Path, timeout_s: int) -> Path:
    """lru-cache with a short timeout, as a task file of its own."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    text = (TASKS / "lru-cache.md").read_text().replace("timeout_s: 120",
                                                       f"timeout_s: {timeout_s}")
    (folder / "lru-cache.md").write_text(text)
    shutil.copy(TASKS / "lru-cache.test.py", folder / "lru-cache.test.py")
    return folder / "lru-cache.md"


def cut_stream() -> Reply:
    return stream_reply(chunk({"content": "def "}), chunk({"content": "f():"}), complete=False)


@pytest.mark.slow
@pytest.mark.parametrize(("case", "kind", "message"), [
    ("http-error", "infra", "HTTP 404 from http://127.0.0.1:"),
    ("cut-chunked", "infra", "was cut"),
    ("cut-plain", "infra", "was cut after"),
    ("error-event", "infra", "the server reported an error mid-stream: out of memory"),
    ("silent", "timeout", "stream ran out of the attempt's timeout_s=2"),
    ("pings-forever", "timeout", "stream ran out of the attempt's timeout_s=2"),
])
def test_broken_servers_become_error_results(case: str, kind: str, message: str,
                                             tmp_path: Path, results_dir: Path) -> None:
    replies = {
        "http-error": Reply.json({"error": {"message": "The model `nope` does not exist",
                                            "type": "invalid_request_error"}}, 404),
        "cut-chunked": cut_stream(),
        "cut-plain": Reply((*sse(chunk({"content": "def "})), b'data: {"id": "c1", "cho'),
                           chunked=False, content_type="text/event-stream"),
        "error-event": stream_reply(chunk({"content": "x"}),
                                    {"error": {"message": "out of memory", "code": 500}}),
        "silent": stream_reply(chunk({"content": "late"}), first_pause_s=4),
        "pings-forever": Reply((b": ping\n\n",) * 12, pause_s=0.3,
                               content_type="text/event-stream"),
    }
    with Loopback({("POST", "/v1/chat/completions"): replies.get(case, Reply())}) as server:
        ran = cli_call("run", str(short_task(tmp_path, 2)), "-m", "nope", "-d", "openai",
                       "-p", f"{server.url}/v1", results_dir=results_dir)
    assert ran.code == 1, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    result = only_result(results_dir)
    assert (result["result"], result["error"]["kind"]) == ("error", kind)
    assert message in result["error"]["message"]
    assert result["pass_at_1"] is False
    if case == "http-error":
        assert "The model `nope` does not exist" in result["error"]["message"]
    assert not list(results_dir.glob(".*.tmp"))  # never half a file


@pytest.mark.slow
def test_a_server_refusing_before_the_run_is_a_setup_error_that_writes_nothing(
        tmp_path: Path, results_dir: Path) -> None:
    """Preflight (issue 24): a server that is not there is one line and exit 2, no result."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    ran = cli_call("run", str(short_task(tmp_path, 2)), "-m", "nope", "-d", "openai",
                   "-p", url, results_dir=results_dir)
    assert ran.code == 2, ran.stdout + ran.stderr
    assert "not reachable" in ran.stderr and "Traceback" not in ran.stderr
    assert list(results_dir.iterdir()) == []


def test_a_server_gone_after_preflight_is_an_error_result(tmp_path: Path) -> None:
    """A server that goes away once the run has started still leaves a result: error/infra."""
    from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
    from benchrig.spec import load_task

    task = load_task(short_task(tmp_path, 2))
    done = run_attempt(task, "nope", OpenAIDriver(), f"http://127.0.0.1:{free_port()}/v1",
                       settings_for(task, Overrides()), tmp_path / "results")
    validate(done.result)
    assert (done.result["result"], done.result["error"]["kind"]) == ("error", "infra")
    assert "cannot connect to" in done.result["error"]["message"]
    assert done.result["pass_at_1"] is False


@pytest.mark.slow
def test_missing_or_bad_base_url_is_a_usage_error(results_dir: Path) -> None:
    ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", results_dir=results_dir,
                   env={"OPENAI_BASE_URL": ""})
    assert ran.code == 2 and "base URL" in ran.stderr
    ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p", "localhost:8080",
                   results_dir=results_dir)
    assert ran.code == 2 and "must be a base URL" in ran.stderr
    assert list(results_dir.iterdir()) == []


def test_bad_config_file_is_a_usage_error(tmp_path: Path, results_dir: Path) -> None:
    config = tmp_path / "bench.toml"
    config.write_text("thinking_token_multiplier = -1\n")
    ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p", "http://127.0.0.1:1/v1",
                   "--config", str(config), results_dir=results_dir)
    assert ran.code == 2
    assert f"{config}: thinking_token_multiplier" in ran.stderr
    assert list(results_dir.iterdir()) == []
