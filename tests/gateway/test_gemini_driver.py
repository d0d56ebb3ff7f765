"""The gemini driver on provider `local`: the real Gemini CLI (pinned, in .agents/) through a
gateway session's Gemini front on a scripted stand-in model; its write_file call writes the
answer and the figures of record are the gateway's, Gemini CLI's own kept as reported_*."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers import get_driver
from benchrig.execute.plan import default_provider
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from tests.conftest import ROOT
from tests.gateway.test_pi_gateway import SOLUTION

pytestmark = pytest.mark.agent

GEMINI = ROOT / ".agents" / "node_modules" / ".bin" / "gemini"


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Path:
    if not GEMINI.exists():
        pytest.skip(f"{GEMINI} is missing: `make agents-all` installs it")
    monkeypatch.setenv("BENCHRIG_GEMINI_BIN", str(GEMINI))
    return GEMINI


def attempt(tmp_path: Path, replies: list[dict[str, Any]]) -> dict[str, Any]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": replies}))
    task = load_task(ROOT / "tasks" / "lru-cache.md")
    done = run_attempt(task, f"script:{script}", get_driver("gemini"), "local",
                       settings_for(task, Overrides()), tmp_path / "results", agent="gemini")
    validate(done.result)
    return done.result


def test_gemini_on_local_goes_through_the_gateway_and_its_figures_are_of_record(
        gemini: Path, tmp_path: Path) -> None:
    r = attempt(tmp_path, [
        {"tool_calls": [{"name": "write_file", "arguments": {
            "file_path": "solution.py", "content": SOLUTION.read_text()}}]},
        {"content": "Done: solution.py is written."}])
    assert r["result"] == "pass" and r["code_source"] == "file", r.get("error")
    m = r["metrics"]
    gateway = m["engine"]["gateway"]
    assert gateway["calls"] == 2 and gateway["tool_calls"] == 1
    assert {c["front"] for c in gateway["calls_detail"]} == {"gemini"}
    assert (m["input_tokens"], m["output_tokens"]) == (gateway["input_tokens"],
                                                       gateway["output_tokens"])
    assert m["input_tokens_source"] == m["output_tokens_source"] == "server"
    assert (m["cost_usd"], m["cost_source"]) == (0.0, "scripted stand-in model: no charge")
    # Gemini CLI counted what the gateway's usageMetadata told it: kept beside, in agreement
    assert m["reported_output_tokens"] == m["output_tokens"]
    assert "disagreement" not in m
    assert m["engine"]["tool_calls"] == 1  # its own event stream: turns and tool calls


def at_most(turns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI's own turn limit (`model.maxSessionTurns`) in the settings it is given."""
    from benchrig.drivers import gemini as driver

    monkeypatch.setitem(driver.SETTINGS, "model", {"maxSessionTurns": turns})


def test_gemini_stopped_at_its_turn_limit_is_checked_not_an_error(
        gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that would go on calling tools: Gemini CLI ends the session at its turn limit
    (a result event naming FatalTurnLimitedError, exit 53) — a limit, like Claude Code's max
    turns: the work is checked, the finish reason says which limit, and nothing is an error."""
    at_most(1, monkeypatch)
    r = attempt(tmp_path, [
        {"tool_calls": [{"name": "write_file", "arguments": {
            "file_path": "solution.py", "content": SOLUTION.read_text()}}]},
        {"tool_calls": [{"name": "run_shell_command", "arguments": {"command": "ls"}}]},
        {"content": "Done: solution.py is written."}])
    assert r["result"] == "pass" and r["code_source"] == "file", r.get("error")
    assert r["finish_reason"] == "max_session_turns"
    assert r["metrics"]["engine"]["gateway"]["calls"] == 1
    assert r["settings"]["agent_settings"]["model"] == {"maxSessionTurns": 1}


def test_gemini_defaults_to_the_embedded_model_like_the_other_agents() -> None:
    get_driver("gemini").preflight("smollm2", "local")  # no longer a usage error
    assert default_provider("gemini", None, ["smollm2"]) == "local"


@pytest.mark.model
def test_gemini_on_the_embedded_model_makes_a_real_tool_call(
        gemini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Gemini CLI on the real SmolLM2 through the Gemini front: at least one real
    tool call, every figure the gateway's (a 135M model need not pass, nor finish in time:
    what was measured before a timeout is kept; a conversation that outgrows the window is the
    model's own error, refused by the gateway with both sizes and nothing cut). One turn: the
    model answers a first call with a tool call or the session ends there anyway, and each
    further turn pays the whole prefill again (~2,000 tokens, ~40 s on one core), until the
    timeout — 240 s of calls the test does not read."""
    from tests.drivers.test_agent_clis import ours
    from tests.helpers.agents import task_with_timeout

    at_most(1, monkeypatch)
    before = ours()
    task = load_task(task_with_timeout(tmp_path, 240))
    settings = settings_for(task, Overrides(max_tokens=200, threads=1))
    done = run_attempt(task, "smollm2", get_driver("gemini"), "local", settings,
                       tmp_path / "results", agent="gemini")
    validate(done.result)
    r = done.result
    error = r.get("error") or {}
    assert r["result"] in ("pass", "fail") or error["kind"] == "timeout" or (
        error["kind"] == "model" and "window" in error["message"]), error
    m = r["metrics"]
    gateway = m["engine"]["gateway"]
    assert gateway["calls"] >= 1 and gateway["tool_calls"] >= 1
    assert {c["front"] for c in gateway["calls_detail"]} == {"gemini"}
    assert {c["backend"] for c in gateway["calls_detail"]} == {"embedded"}
    assert (m["input_tokens"], m["output_tokens"]) == (gateway["input_tokens"],
                                                       gateway["output_tokens"])
    # a call the gateway refused (the conversation outgrew the window) reached no model: its
    # zeros are exact and lower no source; the served calls' counts are llama.cpp's
    assert m["input_tokens_source"] == "server"
    assert m["ttft_ms"] == gateway["ttft_ms"]
    assert ours() <= before  # no gemini left behind
