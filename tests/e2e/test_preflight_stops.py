"""--max-errors: a run whose errors are not the model's pile up stops, says how to resume,
and the command it gives finishes the run once the cause is fixed."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from benchrig.resultio.files import load_results
from tests.conftest import cli_call
from tests.helpers.loopback import Loopback, Reply
from tests.helpers.openai import chunk, stream_reply

TASK = "bat-and-ball"  # an answer check: no sandbox, a quick attempt


def _results(folder: Path) -> list[dict[str, Any]]:
    return load_results([folder]).results


def _server(state: dict[str, bool]) -> dict[tuple[str, str], Any]:
    answer = stream_reply(chunk({"role": "assistant", "content": "Final answer: 5 cents"}),
                          chunk({}, "stop"), "[DONE]")

    def chat(_: Any) -> Reply:  # a server that broke mid-run, until it is fixed
        return answer if state["fixed"] else Reply.json({"error": "boom"}, 500)

    return {("POST", "/v1/chat/completions"): chat}


def test_errors_piling_up_stop_the_run_and_the_resume_line_finishes_it(
        results_dir: Path) -> None:
    state = {"fixed": False}
    with Loopback(_server(state)) as server:
        args = ["run", TASK, "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                "--runs", "20", "--max-errors", "3"]
        ran = cli_call(*args, results_dir=results_dir)
        chats = sum(path == "/v1/chat/completions" for _, path, _ in server.requests)
        assert ran.code == 1, ran.stderr
        assert [r["result"] for r in _results(results_dir)] == ["error"] * 3
        # the next attempt starts before one is recorded: at most that one was in flight,
        # stopped, and left no result
        assert chats <= 4
        assert "stopped after 3 errors that are not the model's (--max-errors 3)" in ran.stderr
        again = ran.stderr.split("resume with ", 1)[1].split("\n", 1)[0]
        words = shlex.split(again)
        assert words[0] == "benchrig" and words[-2:] == ["--resume", "--retry-errors"]
        state["fixed"] = True
        ran = cli_call(*words[1:], results_dir=results_dir)
        assert ran.code == 0, ran.stderr
    latest: dict[int, str] = {}
    for r in sorted(_results(results_dir), key=lambda r: r["started_at"]):
        latest[r["run_index"]] = r["result"]
    assert sorted(latest) == list(range(20)) and set(latest.values()) == {"pass"}


def test_the_default_is_a_tenth_of_the_run(results_dir: Path) -> None:
    with Loopback(_server({"fixed": False})) as server:
        ran = cli_call("run", TASK, "-m", "m", "-d", "openai", "-p", f"{server.url}/v1",
                       "--runs", "40", results_dir=results_dir)
    assert ran.code == 1
    assert len(_results(results_dir)) == 4
    assert "(--max-errors 4)" in ran.stderr
    help_text = cli_call("run", "--help", results_dir=results_dir,
                         env={"COLUMNS": "200"}).stdout
    assert "10% of the attempts" in help_text and "Inspect AI" in help_text
