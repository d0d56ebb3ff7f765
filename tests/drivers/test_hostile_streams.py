"""Streams with numbers JSON cannot hold (`1e400` parses as inf) or nesting too deep to read:
every driver turns them into a result file that is strict JSON, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.errors import DriverError
from benchrig.drivers import get_driver
from benchrig.drivers.claude import ClaudeParser
from benchrig.drivers.codex import CodexParser
from benchrig.drivers.ollama import OllamaDriver
from benchrig.drivers.pi import PiParser
from benchrig.jsonsafe import MAX_DEPTH, TOO_DEEP, json_safe, whole
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT, TASKS, cli_call
from tests.helpers.agents import use_fixture
from tests.helpers.loopback import Loopback, Reply, ndjson, sse
from tests.helpers.ollama import FINAL, done, line, routes
from tests.helpers.ollama import request as ollama_request
from tests.helpers.openai import GOOD, chunk

DEEP = b"[" * 5000 + b"]" * 5000


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


def strict(path: Path) -> Any:
    """The file parsed as strict JSON: Infinity, -Infinity and NaN are refused."""
    return json.loads(path.read_text(), parse_constant=_refuse)


def written(results_dir: Path) -> dict[str, Any]:
    (path,) = results_dir.glob("*.json")
    result: dict[str, Any] = strict(path)
    validate(result)
    for entry in (results_dir / result["transcript_file"]).read_text().splitlines():
        json.loads(entry, parse_constant=_refuse)
    return result


def agent_attempt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, agent: str,
                  scenario: str) -> dict[str, Any]:
    use_fixture(monkeypatch, tmp_path, agent, scenario)
    task = load_task(TASKS / "lru-cache.md")
    run_attempt(task, "m", get_driver(agent), None, settings_for(task, Overrides()),
                tmp_path / "results", agent=agent)
    return written(tmp_path / "results")


def test_safe_numbers_and_structures() -> None:
    assert [whole(v) for v in (3, 3.9, float("inf"), float("nan"), 2**60, True, "7")] == [
        3, 3, None, None, None, None, None]
    nested: Any = 1
    for _ in range(1000):
        nested = [nested]
    safe = json_safe({"a": float("inf"), "b": [float("-inf"), 2.5], "deep": nested})
    assert safe["a"] is None and safe["b"] == [None, 2.5]
    json.dumps(safe, allow_nan=False)  # and it can be written at any stack depth
    cut = safe["deep"]
    for _ in range(MAX_DEPTH - 1):
        cut = cut[0]
    assert cut == TOO_DEEP


def test_codex_usage_of_inf_is_unknown_and_a_deep_line_is_text(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    result = agent_attempt(monkeypatch, tmp_path, "codex", "codex-huge-numbers")
    m = result["metrics"]
    assert result["result"] == "pass"  # the work is still checked
    assert m["output_tokens"] is None and m["input_tokens"] is None  # not a count: unknown
    assert m["tokens_per_s"] is None
    # kept raw, as strict JSON allows (reported after a command ran: not counted anyway)
    assert m["engine"]["usage_not_counted"]["output_tokens"] is None
    assert m["engine"]["stdout_lines"] >= 1 and m["engine"]["unparsed_events"] == 0
    sidecar = (tmp_path / "results" / result["transcript_file"]).read_text()
    assert DEEP.decode() in sidecar  # the unreadable line is kept as text


def test_an_event_shape_the_parser_chokes_on_is_an_infra_error_keeping_the_measure(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    result = agent_attempt(monkeypatch, tmp_path, "claude", "claude-unreadable-result")
    assert (result["result"], result["error"]["kind"]) == ("error", "infra")
    assert "events could not be read (TypeError" in result["error"]["message"]
    m = result["metrics"]
    assert m["wall_s"] > 0 and m["ttft_ms"] > 0  # measured before it failed
    assert m["cost_usd"] is None  # total_cost_usd 1e400 is no cost


def test_pi_usage_and_cost_of_inf_are_unknown() -> None:
    parser = PiParser(local=False)
    inf = json.loads("1e400")
    parser.event(0.1, {"type": "message_end", "message": {
        "role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "x"}],
        "usage": {"input": 5, "output": 7, "cacheRead": inf, "totalTokens": float("nan"),
                  "cost": {"total": inf}}}})
    parser.event(0.2, {"type": "agent_end"})
    run = parser.finish()
    assert (run.input_tokens, run.output_tokens) == (5, 7)
    assert run.cost_usd is None and run.cost_source == (
        "pi reported a cost that is not a finite number")


def test_negative_counts_and_costs_from_an_agent_are_unknown() -> None:
    """A result holds no negative count or cost (the schema says so): unknown, not a crash."""
    assert whole(-3) is None and whole(0) == 0
    codex = CodexParser()
    codex.event(0.1, {"type": "turn.completed",
                      "usage": {"input_tokens": 5, "output_tokens": -3}})
    assert codex.finish().output_tokens is None
    claude = ClaudeParser(streaming=True)
    claude.event(0.1, {"type": "result", "subtype": "success", "is_error": False,
                       "result": "x", "total_cost_usd": -1.0, "num_turns": -2})
    run = claude.finish()
    assert run.cost_usd is None and run.turns is None
    pi = PiParser(local=False)
    pi.event(0.1, {"type": "message_end", "message": {
        "role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "x"}],
        "usage": {"input": 5, "output": 7, "cost": {"total": -0.5}}}})
    pi.event(0.2, {"type": "agent_end"})
    assert pi.finish().cost_usd is None


@pytest.mark.slow
def test_openai_inf_timings_and_deep_events(results_dir: Path) -> None:
    timings = b'{"id": "c1", "choices": [], "timings": {"prompt_per_second": 1e400}}'
    reply = Reply((*sse(chunk({"content": GOOD}), chunk({}, "stop")),
                   b"data: " + timings + b"\n\n", b"data: [DONE]\n\n"),
                  content_type="text/event-stream")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       results_dir=results_dir)
    assert ran.code == 0, ran.stderr
    result = written(results_dir)
    assert result["metrics"]["prefill_tokens_per_s"] is None
    assert result["metrics"]["engine"]["timings"] == {"prompt_per_second": None}


@pytest.mark.slow
@pytest.mark.parametrize("event", [b"data: " + DEEP + b"\n\n",
                                   *sse({"choices": [{"index": 0, "delta": {
                                       "tool_calls": [{"index": 1e300 * 1e300}]}}]})])
def test_openai_unreadable_events_are_error_results(event: bytes, results_dir: Path) -> None:
    reply = Reply((*sse(chunk({"content": "a"})), event, *sse(chunk({}, "stop"), "[DONE]")),
                  content_type="text/event-stream")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", "lru-cache", "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       results_dir=results_dir)
    assert ran.code == 1 and "Traceback" not in ran.stderr, ran.stderr
    result = written(results_dir)
    assert (result["result"], result["error"]["kind"]) == ("error", "infra")
    assert "cannot read" in result["error"]["message"]


def test_ollama_durations_that_make_rates_overflow_are_unknown() -> None:
    tiny = {**FINAL, "prompt_eval_duration": 1e-320, "eval_duration": 1e-320}
    chat = Reply(ndjson(line(GOOD), done(**tiny)), content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server:
        out = OllamaDriver().run(ollama_request(url=server.url))
    assert out.metrics.prefill_tokens_per_s is None
    assert out.metrics.engine["eval_per_second"] is None
    assert out.metrics.output_tokens == FINAL["eval_count"]


def test_ollama_deep_line_is_an_infra_error() -> None:
    chat = Reply((*ndjson(line("Hi")), DEEP + b"\n", *ndjson(done())),
                 content_type="application/x-ndjson")
    with Loopback(routes(chat)) as server, pytest.raises(DriverError) as caught:
        OllamaDriver().run(ollama_request(url=server.url))
    assert caught.value.kind == "infra" and "cannot read" in caught.value.message


# A hostile server, run in a child process of its own so that its peak resident memory
# (VmHWM, reset once the server is up) is the driver's alone; the child's address space is
# capped at 3 GiB, so the attack cannot take the machine down with it either.
HOSTILE_SERVER = r'''
import json, resource, sys, zlib
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from benchrig.core.errors import DriverError
from benchrig.drivers.ollama import OllamaDriver
from benchrig.drivers.openai import OpenAIDriver
from tests.helpers.loopback import Loopback, Reply
from tests.helpers.ollama import routes
from tests.helpers.ollama import request as ollama_request
from tests.helpers.openai import request

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(l.split()[1]) for l in lines if l.startswith(field + ":")) // 1024

def gzip_of(mib, gib):  # 4 GiB in about 4 MiB: one fully flushed block, repeated
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    unit = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    return (head, *(unit,) * (gib * 1024 - 1))

ZEROS, PINGS = bytes(1 << 20), b": ping\n" * ((1 << 20) // 7) + b"\n" * ((1 << 20) % 7)

GZIP = (("Content-Encoding", "gzip"),)
FLOOD = (1 << 16) * 65_536  # 4 GiB in 64 KiB pieces, all one bytes object
attack = sys.argv[1]
if attack == "gzip-error-body":
    route = {("POST", "/v1/chat/completions"): Reply(gzip_of(ZEROS, 4), status=500, headers=GZIP)}
elif attack == "gzip-stream":
    route = {("POST", "/v1/chat/completions"): Reply(gzip_of(PINGS, 4), headers=GZIP,
                                                     content_type="text/event-stream")}
elif attack == "sse-without-blank-line":
    line = b"data: " + b"x" * ((1 << 16) - 7) + b"\n"
    route = {("POST", "/v1/chat/completions"): Reply((line,) * 65_536,
                                                     content_type="text/event-stream")}
elif attack == "ndjson-without-newline":
    route = routes(Reply((b"x" * (1 << 16),) * 65_536, content_type="application/x-ndjson"))
elif attack == "json-values":  # 15 MB of `[],`: five million lists, 400 MB once built
    route = routes(Reply(bytes(), content_type="application/x-ndjson"))
    route[("GET", "/api/version")] = Reply((b'{"v": [' + b"[]," * 5_000_000 + b"[]]}",))
elif attack == "gzip-json-answer":
    route = routes(Reply(bytes(), content_type="application/x-ndjson"))
    route[("GET", "/api/version")] = Reply(gzip_of(ZEROS, 4), headers=GZIP)
with Loopback(route) as server:
    driver, asked = ((OllamaDriver(), ollama_request(url=server.url)) if "json" in attack
                     else (OpenAIDriver(), request(f"{server.url}/v1")))
    before = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as reset:
        reset.write("5")  # VmHWM from here on
    try:
        driver.run(asked)
        outcome = "no error"
    except DriverError as exc:
        outcome = f"{exc.kind}: {exc.message[:300]}"
    print(json.dumps({"growth_mib": status("VmHWM") - before, "outcome": outcome}))
'''
ATTACKS = {"gzip-error-body": "infra: HTTP 500 from ",
           "gzip-stream": "more than 64 MiB",
           "sse-without-blank-line": "one event of more than 8 MiB",
           "ndjson-without-newline": "one line of more than 8 MiB",
           "gzip-json-answer": "more than 16 MiB",
           "json-values": "more than 2,000,000 JSON values"}


@pytest.mark.slow
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_hostile_server_gets_an_error_result_in_bounded_memory(attack: str) -> None:
    """A 4 MiB gzip body that decodes to 4 GiB (an error body, a stream of keep-alive pings,
    a JSON answer), 4 GiB of SSE `data:` lines with no blank line, 4 GiB of NDJSON with no
    newline, 15 MB of JSON that builds five million lists: each is an infra error saying why,
    and the driver's resident memory grows less than 200 MiB."""
    ran = subprocess.run([sys.executable, "-c", HOSTILE_SERVER, attack], capture_output=True,
                         text=True, timeout=300, cwd=ROOT, check=False)
    assert ran.returncode == 0 and ran.stdout, ran.stderr[-2000:]
    found = json.loads(ran.stdout)
    assert found["outcome"].startswith("infra: ") and ATTACKS[attack] in found["outcome"], found
    assert found["growth_mib"] < 200, found
