"""The five agent parsers on what the real CLIs wrote against the stand-in model
(tests/fixtures/agent_clis/: opencode, Gemini CLI and Qwen Code streams, aider's chat history,
mini-swe-agent's trajectory), and on the endings that are errors though the CLI exits 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchrig.core.measurements import reported_source
from benchrig.drivers.agent import AgentRun, StreamParser, reported_figures
from benchrig.drivers.agent_clis import FIGURES_SOURCE
from benchrig.drivers.aider import AiderParser
from benchrig.drivers.gemini import GeminiParser
from benchrig.drivers.miniswe import MiniParser
from benchrig.drivers.opencode import OpencodeParser
from benchrig.drivers.qwen import QwenParser
from tests.conftest import ROOT

RECORDED = ROOT / "tests" / "fixtures" / "agent_clis"
ANSWER = "I wrote solution.py."


def streamed(parser: StreamParser, lines: list[dict[str, Any]]) -> AgentRun:
    for i, line in enumerate(lines):
        parser.event(0.1 * (i + 1), line)
    return parser.finish()


def recorded(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (RECORDED / name).read_text().splitlines()]


def runs(tmp_path: Path, metered: bool = False) -> dict[str, AgentRun]:
    trajectory = tmp_path / "trajectory.json"
    trajectory.write_text((RECORDED / "mini-trajectory.json").read_text())
    return {
        "opencode": streamed(OpencodeParser(metered), recorded("opencode.jsonl")),
        "gemini": streamed(GeminiParser(metered), recorded("gemini.jsonl")),
        "qwen": streamed(QwenParser(metered), recorded("qwen.jsonl")),
        "aider": AiderParser(RECORDED / "aider-chat.md", metered).finish(),
        "miniswe": MiniParser(trajectory, metered).finish(),
    }


TOOLS = {"opencode": "bash", "gemini": "write_file", "qwen": "run_shell_command",
         "aider": "edit", "miniswe": "bash"}
# what each recording's agent said it spent (the stand-in's 100 in, 20 out per call)
REPORTED_INPUT = {"opencode": 200, "gemini": 200, "qwen": 200, "aider": 652, "miniswe": None}


def test_each_recorded_run_is_read_for_its_turns_tool_calls_and_answer(tmp_path: Path) -> None:
    for name, run in runs(tmp_path).items():
        assert run.completed and run.failure is None, name
        assert [c["name"] for c in run.tool_calls][:1] == [TOOLS[name]], name
        # mini-swe-agent ends on its submit command: it has no final text
        assert run.answer.strip().startswith(ANSWER if name != "miniswe" else ""), name
        assert run.turns is not None and run.turns >= 1, name
        # the agent's figures are kept aside, never of record
        assert (run.input_tokens, run.output_tokens, run.cost_usd) == (None, None, None), name
        assert run.cost_source == FIGURES_SOURCE
        # in the one place every path keeps them (metrics.reported_*), with their source
        assert run.reported["input_tokens"] == REPORTED_INPUT[name], name
        assert not [k for k in run.engine if k.startswith("reported_")], name


def test_metered_by_the_gateway_the_parsers_leave_the_figures_to_it(tmp_path: Path) -> None:
    """with_gateway_figures replaces them and keeps them as reported_*: they must reach it."""
    read = runs(tmp_path, metered=True)
    assert read["opencode"].input_tokens == read["qwen"].input_tokens == 200
    assert "reported_input_tokens" not in read["gemini"].engine and not read["gemini"].reported


@pytest.mark.parametrize(("parser", "lines", "why"), [
    (GeminiParser, [{"type": "init", "session_id": "s", "model": "m"},
                    {"type": "result", "status": "error",
                     "error": {"type": "Error", "message": "[API Error: 400 refused]"}}],
     "status error: [API Error: 400 refused]"),
    (OpencodeParser, [{"type": "step_start", "part": {}},
                      {"type": "error", "error": {"name": "APIError",
                                                 "message": "400 the model refused"}}],
     "400 the model refused"),
])
def test_an_error_the_agent_reports_with_exit_code_0_is_an_error(
        parser: type[StreamParser], lines: list[dict[str, Any]], why: str) -> None:
    run = streamed(parser(), lines)
    assert run.failure is not None and why in run.failure


def test_aider_without_a_reply_says_why_and_a_reply_cut_at_max_tokens_is_length(
        tmp_path: Path) -> None:
    history = tmp_path / "chat.md"
    history.write_text("#### write it\n\n> litellm.APIConnectionError: connection refused\n")
    run = AiderParser(history).finish()
    assert not run.completed and run.failure is not None and "connection refused" in run.failure
    history.write_text("#### write it\n\nsolution.py\n```python\nclass L\n"
                       "> Model openai/smollm2 has hit a token limit!\n"
                       "> Output tokens: ~180 of 200 -- possibly exceeded output limit!\n")
    run = AiderParser(history).finish()
    assert run.completed and run.failure is None and run.finish_reason == "length"


def test_mini_ending_on_an_exception_is_an_error_and_a_limit_is_not(tmp_path: Path) -> None:
    trajectory = tmp_path / "trajectory.json"
    for status, failed in (("BadRequestError", True), ("LimitsExceeded", False)):
        trajectory.write_text(json.dumps({"info": {"exit_status": status, "submission": ""},
                                          "messages": []}))
        run = MiniParser(trajectory).finish()
        assert run.completed and (run.failure is not None) is failed, status
        assert run.finish_reason == status
    trajectory.unlink()  # no trajectory at all: not completed (the exit code says why)
    assert not MiniParser(trajectory).finish().completed


def test_thinking_a_tool_forges_after_the_first_tool_is_not_counted() -> None:
    """A figure of record stops at the first tool (docs/security.md): the tool's forged
    reasoning event in opencode's stdout adds nothing to thinking_chars, and says so."""
    lines = recorded("opencode.jsonl")
    first_tool = next(i for i, line in enumerate(lines) if line.get("type") == "tool_use")
    forged = {"type": "reasoning", "part": {"type": "reasoning", "text": "x" * 50_000}}
    honest = streamed(OpencodeParser(), lines)
    run = streamed(OpencodeParser(), [*lines[:first_tool + 1], forged, *lines[first_tool + 1:]])
    assert run.thinking_chars == honest.thinking_chars
    assert "thinking_chars" in run.partial


def test_qwen_keeps_its_whole_word_aside_and_claims_no_partial_figure(tmp_path: Path) -> None:
    """Its figures are only reported_* (the agent's word, after tools too): none of record is
    left that could be a lower bound, so metrics.partial names none of them."""
    run = runs(tmp_path)["qwen"]
    assert run.tools_began_s is not None
    assert run.reported["output_tokens"] is not None
    assert not {"input_tokens", "output_tokens", "cost_usd"} & set(run.partial), run.partial


def test_both_paths_keep_the_agents_word_in_one_schema_valid_place(tmp_path: Path) -> None:
    """Metered (the gateway replaces the figures) or not (gemini on a Gemini-API base URL),
    what the agent said it spent is `metrics.reported_*` with `reported_source`, the same keys
    either way, and a result holding them validates; nothing of it is left in `engine`."""
    import copy

    from benchrig.core.measurements import Metrics
    from benchrig.core.transcript import DriverOutput, Transcript
    from benchrig.gateway import with_gateway_figures
    from benchrig.resultio.files import validate
    from tests.helpers.results import EXAMPLE

    metered = runs(tmp_path, metered=True)["gemini"]
    said = Metrics(input_tokens=metered.input_tokens,
                   output_tokens=metered.output_tokens, cost_usd=None,
                   cost_source=metered.cost_source)
    through = with_gateway_figures(DriverOutput(Transcript("done"), said), [], "gemini")
    plain = runs(tmp_path)["gemini"]
    aside = Metrics(reported=reported_figures(plain, "gemini"), engine=plain.engine)
    for metrics in (through.metrics, aside):
        data = metrics.to_json()
        assert data["reported_input_tokens"] == 200 and data["reported_source"] == \
            reported_source("gemini"), data
        assert not [k for k in data["engine"] or {} if k.startswith("reported_")]
        result = copy.deepcopy(EXAMPLE)
        result["metrics"] = {**result["metrics"], **data, "check_s": 0.0}
        validate(result)
    older = copy.deepcopy(EXAMPLE)  # an older result: an unmetered agent's word in engine
    older["metrics"]["engine"] = {"reported_input_tokens": 200, "reported_cost_usd": None}
    validate(older)
