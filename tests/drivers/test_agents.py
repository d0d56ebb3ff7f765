"""Claude Code and Codex drivers against fixture CLIs (tests/fixtures/agents/) that check the
flags they are given and replay streams written from the shapes in protocols.md §2–§3."""

from __future__ import annotations

import itertools
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchrig.drivers.agent_process import TERM_GRACE_S
from benchrig.metrics import TOKENS_PER_S_FLOOR_S
from benchrig.plausible import MAX_DECODE_TOKENS_PER_S
from benchrig.report.grouping import grouped
from benchrig.report.table import model_rows
from tests.conftest import ROOT, benchrig
from tests.helpers.agents import (
    CONFINED,
    FIXTURES,
    Done,
    attempt,
    replayed,
    task_with_timeout,
)
from tests.helpers.processes import host_processes, wait_dead
from tests.helpers.staging import stage_files

HUNG_CHILD_S = 600  # the hang scenario's child sleeps this long (tests/fixtures/agents)
# The hung agent's timeout: room for the fake agent's interpreter to start and spawn its child
# on a busy machine (at 1 s, under load ~15, it was killed before it had any child to kill).
HUNG_TIMEOUT_S = 10

RUN = [str(ROOT / "scripts" / "run.sh")]


# ---- Claude Code -------------------------------------------------------------------------


def starve_the_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's output is read only once it has exited, as by a reader that got no core
    meanwhile (load ~17): every line comes in one read, with one stamp."""
    from benchrig.drivers import agent_process

    real = agent_process._Streams._read

    def starved(streams: Any, wait: float) -> None:
        while not agent_process._exited(streams.proc.pid):
            time.sleep(0.01)
        real(streams, wait)

    monkeypatch.setattr(agent_process._Streams, "_read", starved)


class _OneLinePerRead:
    """`os` as agent_process sees it, but a read returns at most one line."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def read(fd: int, size: int) -> bytes:
        got = b""
        while len(got) < size and not got.endswith(b"\n"):
            try:
                byte = os.read(fd, 1)
            except OSError:  # nothing more yet (or the pty closed): what came is the read
                if not got:
                    raise
                break
            if not byte:
                break
            got += byte
        return got


def one_line_per_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read of the agent's output hands the reader one line at most, whatever the
    machine's timing (no clock): each line comes in a read of its own, so each must carry
    that read's stamp. Elsewhere lines the agent prints apart may be read together, and a
    reader that stamped every line with its first read's time passed."""
    from benchrig.drivers import agent_process

    monkeypatch.setattr(agent_process, "os", _OneLinePerRead())


def stamped_read_by_read(done: Done) -> None:
    """Each line was read alone: its stamp is its own read's, later than the line before."""
    stamps = [line["t_s"] for line in done.sidecar if "t_s" in line]
    assert len(stamps) > 3
    assert all(a < b for a, b in itertools.pairwise(stamps)), stamps
    assert done.metrics["answer_ttft_ms"] > done.metrics["ttft_ms"]  # read apart


def test_claude_stream_json_success(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    claude_success(attempt(monkeypatch, tmp_path, "claude", "claude-success", "sonnet"))


def test_claude_stream_json_success_read_one_line_at_a_time(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    one_line_per_read(monkeypatch)
    done = attempt(monkeypatch, tmp_path, "claude", "claude-success", "sonnet")
    stamped_read_by_read(done)
    claude_success(done)


def test_claude_stream_json_success_read_by_a_starved_reader(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    starve_the_reader(monkeypatch)
    done = attempt(monkeypatch, tmp_path, "claude", "claude-success", "sonnet")
    assert done.metrics["ttft_ms"] == done.metrics["answer_ttft_ms"]  # read at once
    claude_success(done)


def claude_success(done: Done) -> None:
    r, m = done.result, done.metrics
    assert (r["result"], r["code_source"], r["finish_reason"]) == ("pass", "file", "end_turn")
    assert r["checks"] == {**r["checks"], "passed": 2, "total": 2}
    # thinking first, then 0.1 s later the answer: each figure is its line's stamp (when it
    # was read; lines read at once share one, so the gap is not asserted: see codex_success)
    deltas = [(e["event"]["event"]["delta"]["type"], e["t_s"] * 1000) for e in done.sidecar
              if e.get("kind") == "event"
              and e["event"].get("event", {}).get("type") == "content_block_delta"]
    assert m["ttft_ms"] == pytest.approx(deltas[0][1], abs=0.001)
    assert deltas[0][0] == "thinking_delta"
    first_text = next(t for kind, t in deltas if kind == "text_delta")
    assert m["answer_ttft_ms"] == pytest.approx(first_text, abs=0.001)
    assert m["answer_ttft_ms"] >= m["ttft_ms"] > 0
    assert m["think_time_s"] == pytest.approx((m["answer_ttft_ms"] - m["ttft_ms"]) / 1000)
    assert m["thinking_chars"] == len("An OrderedDict keeps recency in O(1).")
    # input = uncached + cache writes + cache reads, of msg_1 alone: the result's session
    # total (and msg_2) came after the Write tool ran, which could have printed them
    assert (m["input_tokens"], m["output_tokens"]) == (9 + 5120, 240)
    assert m["input_tokens_source"] == m["output_tokens_source"] == "server"
    # the rate is over msg_1's span (its first token to its last usage line), not the whole
    # run; read at once, that span is none, and the floored rate is too high to be shown
    ends = [e["t_s"] for e in done.sidecar if e.get("kind") == "event"
            and e["event"].get("type") == "assistant" and e["event"]["message"]["id"] == "msg_1"]
    rate = 240 / max(ends[-1] - m["ttft_ms"] / 1000, TOKENS_PER_S_FLOOR_S)
    if rate <= MAX_DECODE_TOKENS_PER_S:
        assert m["tokens_per_s"] == pytest.approx(rate, rel=1e-3)
        assert set(m["partial"]) == {"input_tokens", "output_tokens", "tokens_per_s"}
    else:
        assert m["tokens_per_s"] is None and "tokens_per_s" in m["rejected"]
        assert set(m["partial"]) == {"input_tokens", "output_tokens"}
    assert m["cost_usd"] is None and "first tool ran" in m["rejected"]["cost_usd"]
    # msg_1 arrives on three lines repeating its usage: counted once
    assert done.engine["usage_by_message"]["output_tokens"] == 240
    assert done.engine["messages"] == 1 and done.engine["usages_not_counted"] == 1
    assert (done.engine["turns"], done.engine["tool_calls"]) == (2, 1)
    assert (done.engine["duration_ms"], done.engine["duration_api_ms"]) == (4210, 3875)
    assert done.engine["subtype"] == "success" and done.engine["is_error"] is False
    assert r["environment"]["runtime"]["name"] == "claude"
    assert r["environment"]["runtime"]["version"] == "2.0.14"
    assert r["settings"]["output_format"] == "stream-json"
    assert r["settings"]["temperature"] is None  # the agent's own choice, not BenchRig's
    assert r["answer_excerpt"] == "Done: solution.py defines LRUCache."


def test_claude_flags_workspace_and_sidecar(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "claude", "claude-success", "sonnet")
    argv = done.argv
    for flag in ("-p", "--verbose", "--include-partial-messages",
                 "--dangerously-skip-permissions"):
        assert flag in argv
    assert argv[argv.index("--output-format") + 1] == "stream-json"
    assert argv[argv.index("--model") + 1] == "sonnet"
    assert "Implement a least-recently-used" in argv[-1] and "`solution.py`" in argv[-1]
    start = done.log[0]
    assert Path(start["cwd"]).name.startswith("benchrig-agent-")
    assert not Path(start["cwd"]).exists()  # the workspace is gone
    assert start["env"]["IS_SANDBOX"] == ("1" if os.geteuid() == 0 else None)
    kinds = [line["kind"] for line in done.sidecar]
    assert kinds[:2] == ["prompt", "answer"]
    events = [line for line in done.sidecar if line["kind"] == "event"]
    assert [line["event"] for line in events] == replayed("claude-success")
    stamps = [line["t_s"] for line in events]
    assert stamps == sorted(stamps) and stamps[0] > 0
    answer = done.sidecar[1]
    assert [call["name"] for call in answer["tool_calls"]] == ["Write"]
    assert answer["turns"] == 2
    assert "class LRUCache" in answer["files"]["solution.py"]
    assert "events" not in done.result and "tool_calls" not in done.result


def test_claude_plain_json_has_no_ttft(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "claude", "claude-json", "sonnet", provider="json")
    r, m = done.result, done.metrics
    assert r["result"] == "pass" and r["code_source"] == "file"
    for unknown in ("ttft_ms", "answer_ttft_ms", "think_time_s", "thinking_chars",
                    "tokens_per_s"):
        assert m[unknown] is None
    assert (m["input_tokens"], m["output_tokens"], m["cost_usd"]) == (12 + 5120 + 20480, 350,
                                                                      0.0213)
    assert m["wall_s"] >= 0.2
    assert done.engine["ttft_basis"].startswith("none")
    argv = done.argv
    assert argv[argv.index("--output-format") + 1] == "json"
    assert "--verbose" not in argv and "--include-partial-messages" not in argv


def test_claude_is_error_with_exit_0_is_an_error(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "claude", "claude-is-error", "sonnet")
    r = done.result
    assert r["result"] == "error" and r["pass_at_1"] is False
    assert r["error"]["kind"] == "infra"
    assert "is_error true" in r["error"]["message"] and "API Error: 529" in r["error"]["message"]
    assert (r["checks"]["passed"], r["checks"]["total"]) == (0, 0)  # infra: never checked
    assert r["code_source"] is None
    assert r["environment"]["runtime"]["version"] == "2.0.14"  # measured before it failed
    assert done.engine["exit_code"] == 0
    assert any(line["kind"] == "event" and line["event"]["type"] == "result"
               for line in done.sidecar)


def test_an_agent_error_after_the_models_tool_calls_counts_against_the_model(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A tool the model ran can write a forged `is_error` result to the agent's stdout (or
    kill the agent): an error after its tool calls is not excused as infrastructure."""
    done = attempt(monkeypatch, tmp_path, "claude", "claude-forged-error", "sonnet")
    r = done.result
    assert r["result"] == "error" and r["error"]["kind"] == "model"
    assert "after 1 tool call of the model" in r["error"]["message"]
    assert (r["checks"]["passed"], r["checks"]["total"]) == (0, 2)  # every assertion failed
    (row,) = model_rows(grouped([r]))
    assert (row.pass_rate, row.scored, row.uncounted_errors) == (0.0, 1, 0)


def test_claude_max_turns_checks_what_was_written(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "claude", "claude-max-turns", "sonnet")
    r = done.result
    assert r["error"] is None and r["finish_reason"] == "error_max_turns"
    assert r["result"] == "fail" and r["code_source"] == "file"  # the first draft is incomplete
    assert (done.engine["turns"], done.engine["tool_calls"]) == (1, 1)
    # its only message ran the tool: tokens from it, partial; the cost came after the tool
    assert done.metrics["output_tokens"] == 90 and "output_tokens" in done.metrics["partial"]
    assert done.metrics["cost_usd"] is None and "cost_usd" in done.metrics["rejected"]


def test_claude_crash_mid_stream(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "claude", "claude-crash", "sonnet")
    r = done.result
    assert r["result"] == "error" and r["error"]["kind"] == "infra"
    assert "exited with code 1" in r["error"]["message"]
    assert "socket hang up" in r["error"]["message"]
    assert done.metrics["ttft_ms"] > 0  # the first delta did arrive
    assert done.metrics["output_tokens"] is None  # no result, no usage: unknown, not 0
    assert any(line["kind"] == "stderr" for line in done.sidecar)


@pytest.mark.slow
@pytest.mark.parametrize("agent, scenario, model", [("claude", "claude-hang", "sonnet"),
                                                    ("codex", "codex-hang", "gpt-5")])
def test_a_hung_agent_is_killed_with_its_children(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path, agent: str, scenario: str,
                                                  model: str) -> None:
    marker = f"fake-agent-child-{secrets.token_hex(6)}"
    monkeypatch.setenv("FAKE_AGENT_MARKER", marker)
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:  # the child, as the host sees it, while the attempt runs
        while not stop.is_set() and not seen:
            seen.extend(host_processes(marker))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    began = time.monotonic()
    try:
        done = attempt(monkeypatch, tmp_path, agent, scenario, model,
                       task_file=task_with_timeout(tmp_path, HUNG_TIMEOUT_S))
    finally:
        stop.set()
        watcher.join()
    r = done.result
    assert r["result"] == "error" and r["error"]["kind"] == "timeout"
    assert f"timeout_s={HUNG_TIMEOUT_S}" in r["error"]["message"]
    assert r["error"]["phase"] == "agent"
    # the agent gets what setting it up left of the attempt's one deadline, then the kill
    assert 0 < done.metrics["wall_s"] < HUNG_TIMEOUT_S + TERM_GRACE_S
    # the attempt ended at the kill, not when its hung child would have (its set-up before
    # the agent starts is the machine's time, not a figure to bound here: issue 23)
    assert time.monotonic() - began < HUNG_CHILD_S
    assert any(entry.get("child_marker") == marker for entry in done.log)
    assert seen  # the child ran...
    assert all(wait_dead(pid) for pid in seen)  # ...and was killed with the agent


# ---- Codex --------------------------------------------------------------------------------


def test_codex_success(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    codex_success(attempt(monkeypatch, tmp_path, "codex", "codex-success", "gpt-5"))


def test_codex_success_read_one_line_at_a_time(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    one_line_per_read(monkeypatch)
    done = attempt(monkeypatch, tmp_path, "codex", "codex-success", "gpt-5")
    stamped_read_by_read(done)
    codex_success(done)


def test_codex_success_read_by_a_starved_reader(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    """At load ~17 the reader got no core in the 0.05 s between the reasoning item and the
    first tool item: both lines came in one read, one stamp, and `answer_ttft_ms >
    ttft_ms` failed."""
    starve_the_reader(monkeypatch)
    done = attempt(monkeypatch, tmp_path, "codex", "codex-success", "gpt-5")
    assert done.metrics["ttft_ms"] == done.metrics["answer_ttft_ms"]  # read at once
    codex_success(done)


def codex_success(done: Done) -> None:
    r, m = done.result, done.metrics
    assert (r["result"], r["code_source"]) == ("pass", "file")
    # No token deltas: TTFT is the first completed item (reasoning), the answer the first
    # tool item, which completes 0.05 s later. A time is when BenchRig read the line, and
    # lines read at once share it (a reader that got no core meanwhile): so each figure is
    # its own line's stamp, and the two are in order, not necessarily apart.
    read_at = {e["event"]["item"]["id"]: e["t_s"] * 1000 for e in done.sidecar
               if e.get("kind") == "event" and e["event"].get("type") == "item.completed"}
    assert m["ttft_ms"] == pytest.approx(read_at["item_0"], abs=0.001)
    assert m["answer_ttft_ms"] == pytest.approx(read_at["item_1"], abs=0.001)
    assert m["answer_ttft_ms"] >= m["ttft_ms"] > 0
    assert done.engine["ttft_basis"].startswith("first completed item")
    assert m["thinking_chars"] == len("**Choosing a structure**\n\nAn OrderedDict keeps "
                                      "recency in O(1).")
    # its one usage comes when the turn ends, after its commands ran: not counted
    assert (m["input_tokens"], m["output_tokens"]) == (None, None)
    assert "after the tools the model ran" in m["rejected"]["output_tokens"]
    assert done.engine["usage_not_counted"]["cached_input_tokens"] == 24448
    assert m["cost_usd"] is None and m["cost_source"] == "codex reports no cost"
    assert (done.engine["turns"], done.engine["tool_calls"]) == (1, 2)
    assert r["answer_excerpt"] == "Wrote solution.py with the LRUCache class."
    assert r["environment"]["runtime"]["version"] == "0.46.0"
    argv = done.argv
    assert argv[:2] == ["exec", "--json"] and "--skip-git-repo-check" in argv
    if CONFINED:  # BenchRig's confinement is the sandbox: Codex's own cannot start inside it
        assert "--dangerously-bypass-approvals-and-sandbox" in argv and "--sandbox" not in argv
        assert r["settings"]["codex_sandbox"].startswith("none of its own")
    else:
        assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert argv[argv.index("-m") + 1] == "gpt-5"
    tools = [call["name"] for call in done.sidecar[1]["tool_calls"]]
    assert tools == ["command_execution", "file_change"]


def test_codex_turn_failed_with_exit_0_is_an_error(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "codex", "codex-turn-failed", "gpt-5")
    r = done.result
    assert r["result"] == "error" and r["error"]["kind"] == "infra"
    assert "rate limit reached" in r["error"]["message"]
    assert done.engine["exit_code"] == 0


def test_codex_crash_mid_stream(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    done = attempt(monkeypatch, tmp_path, "codex", "codex-crash", "gpt-5")
    r = done.result
    assert r["result"] == "error" and "exited with code 101" in r["error"]["message"]
    assert "panicked" in r["error"]["message"]
    assert done.metrics["ttft_ms"] > 0 and done.metrics["answer_ttft_ms"] is None


# ---- the command line ---------------------------------------------------------------------


@pytest.mark.slow
def test_run_sh_headlines_with_the_fixtures(tmp_path: Path, results_dir: Path) -> None:
    for agent, model, scenario in (("claude", "sonnet", "claude-success"),
                                   ("codex", "gpt-5", "codex-success")):
        env = {f"BENCHRIG_{agent.upper()}_BIN": str(FIXTURES / agent),
               "FAKE_AGENT_SCENARIO": str(FIXTURES / "streams" / f"{scenario}.jsonl"),
               "FAKE_AGENT_FILES": str(stage_files(tmp_path))}
        ran = benchrig("lru-cache", model, agent, results_dir=results_dir, command=RUN, env=env)
        assert ran.code == 0, ran.stderr
        assert f"lru-cache {model} {agent}: pass (2/2 checks)" in ran.stdout


@pytest.mark.slow
def test_an_agent_error_exits_1(tmp_path: Path, results_dir: Path) -> None:
    env = {"BENCHRIG_CLAUDE_BIN": str(FIXTURES / "claude"),
           "FAKE_AGENT_SCENARIO": str(FIXTURES / "streams" / "claude-is-error.jsonl")}
    ran = benchrig("lru-cache", "sonnet", "claude", results_dir=results_dir, command=RUN, env=env)
    assert ran.code == 1
    assert "error — infra: claude reported an error" in ran.stdout


@pytest.mark.slow
@pytest.mark.parametrize("agent, hint", [("claude", "npm install -g @anthropic-ai/claude-code"),
                                         ("codex", "npm install -g @openai/codex")])
def test_a_missing_agent_exits_2_with_an_install_hint(results_dir: Path, agent: str,
                                                      hint: str) -> None:
    """A setup failure, found by preflight: one line, exit 2, nothing written."""
    if (ROOT / ".agents" / "node_modules" / ".bin" / agent).exists():
        pytest.skip(f"{agent} is installed in .agents/, where BenchRig looks after PATH")
    env = {"PATH": "/usr/bin:/bin", f"BENCHRIG_{agent.upper()}_BIN": ""}
    ran = benchrig("lru-cache", "m", agent, results_dir=results_dir, command=RUN, env=env)
    assert ran.code == 2
    assert f"{agent} is not installed" in ran.stderr and hint in ran.stderr
    assert list(results_dir.iterdir()) == []


