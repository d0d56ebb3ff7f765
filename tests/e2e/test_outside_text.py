"""Outside text (candidates, agents, servers, result files) cannot stop a run, lose an
attempt, bloat a result or paint the operator's terminal (issue 10, classes 1 and 3)."""

from __future__ import annotations

import copy
import csv
import io
import itertools
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from benchrig import cli
from benchrig.cli.run import verdict_line
from benchrig.core.transcript import DriverOutput
from benchrig.drivers.replay import ReplayDriver
from benchrig.jsonsafe import json_safe
from benchrig.orchestrate import runner
from benchrig.orchestrate.runner import Overrides, UnrecordedAttempt, run_attempt, settings_for
from benchrig.report import render
from benchrig.resultio import files as result_module
from benchrig.resultio.files import load_results, result_text, validate
from benchrig.spec import load_task
from benchrig.textsafe import label, printable, printable_lines
from tests.conftest import ROOT, SOLUTIONS, TASKS, answer_file, cli_call, fenced
from tests.helpers.loopback import Loopback, Reply, sse

FIXTURES = ROOT / "tests" / "fixtures" / "agents"
# What must never reach the operator's terminal or a report: C0 controls but the line
# break, DEL, C1 controls (U+009B is a CSI), bidi embeddings, overrides and isolates.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                 "\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
# A failing candidate's attempt to start a line of its own that reads as a pass.
FORGED = "\n\x9b2K\x1b[1Gforged-line: pass (3/3 checks)\u202e"


def clean(text: str) -> None:
    """Only BenchRig's own characters and lines: nothing raw, no forged line."""
    assert not RAW.findall(text), RAW.findall(text)[:5]
    assert not any(line.lstrip().startswith("forged-line") for line in text.splitlines())


def results_in(folder: Path) -> list[dict[str, Any]]:
    loaded = load_results([folder])
    assert loaded.rejected == []
    return loaded.results


# ---- class 1: a lone surrogate, a huge class name, a failed write ------------------------

SURROGATE_IN_EXCEPTION = """
class LRUCache:
    def __init__(self, capacity):
        raise ValueError("broken \\ud800 cache")
"""


def test_a_surrogate_in_a_candidate_exception_leaves_a_result_and_the_run_goes_on(
        tmp_path: Path, results_dir: Path) -> None:
    path = answer_file(tmp_path, fenced(SURROGATE_IN_EXCEPTION))
    ran = cli_call("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(path),
                   "--runs", "2", results_dir=results_dir)
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert ran.code == 1
    found = results_in(results_dir)
    assert [r["result"] for r in found] == ["fail", "fail"]
    assert any("\\ud800" in d["message"] for d in found[0]["checks"]["details"])
    assert "0% (0/2)" in ran.stdout  # the run's table counts both attempts
    summary = cli_call("summary", str(results_dir), results_dir=results_dir)
    assert "0% (0/2)" in summary.stdout


HUGE_CLASS_NAME = """
Huge = type("B" * 1_000_000, (ValueError,), {})
raise Huge("at import")
"""


def test_a_huge_exception_class_name_keeps_the_result_small(tmp_path: Path,
                                                             results_dir: Path) -> None:
    path = answer_file(tmp_path, fenced(HUGE_CLASS_NAME))
    ran = cli_call("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(path),
                   results_dir=results_dir)
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    (file,) = results_dir.glob("*.json")
    assert file.stat().st_size < 100_000
    (found,) = results_in(results_dir)
    assert found["result"] == "fail" and "BBBB" in found["notes"]
    assert len(ran.stdout) < 20_000


def test_json_safe_makes_every_string_and_key_writable() -> None:
    hostile = {"key \ud800": ["value \udfff", {"deep \ud801": "x\ud802"}], "n": float("inf")}
    text = result_text(json_safe(hostile))
    text.encode("utf-8")  # a lone surrogate would raise here: the result write's crash
    assert json.loads(text) == {"key \\ud800": ["value \\udfff", {"deep \\ud801": "x\\ud802"}],
                                "n": None}


def test_a_failed_result_write_is_recorded_as_an_error_and_the_next_attempt_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_task(TASKS / "bat-and-ball.md")
    path = answer_file(tmp_path, "The ball costs 5 cents.\nFinal answer: 5")
    real, calls = result_module.write_atomic, []

    def fail_once(target: Path, text: str) -> None:
        calls.append(target)
        if len(calls) == 2:  # the first attempt's result file (after its sidecar)
            raise OSError(28, "No space left on device")
        real(target, text)

    monkeypatch.setattr(runner, "write_atomic", fail_once)
    folder = tmp_path / "results"
    first = run_attempt(task, "m", ReplayDriver(), str(path), settings_for(task, Overrides()),
                        folder)
    second = run_attempt(task, "m", ReplayDriver(), str(path), settings_for(task, Overrides()),
                         folder)
    assert first.result["result"] == "error"
    assert first.result["error"]["kind"] == "harness"
    assert "writing the result failed: OSError" in first.result["error"]["message"]
    assert "No space left on device" in first.result["error"]["message"]
    assert second.result["result"] == "pass"
    assert sorted(r["result"] for r in results_in(folder)) == ["error", "pass"]


def test_a_result_that_does_not_validate_becomes_an_error_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_task(TASKS / "bat-and-ball.md")
    path = answer_file(tmp_path, "The ball costs 5 cents.\nFinal answer: 5")
    real_result = runner._result

    def bad_result(*args: Any) -> dict[str, Any]:
        made = real_result(*args)
        if made["error"] is None:
            made["metrics"]["wall_s"] = -1.0  # what a broken driver could hand over
        return made

    monkeypatch.setattr(runner, "_result", bad_result)
    attempt = run_attempt(task, "m", ReplayDriver(), str(path),
                          settings_for(task, Overrides()), tmp_path / "results")
    validate(attempt.result)
    assert attempt.result["result"] == "error" and attempt.result["error"]["kind"] == "harness"
    assert "ResultError" in attempt.result["error"]["message"]


def test_when_no_result_can_be_written_the_cli_says_so_counts_it_and_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = answer_file(tmp_path, "The ball costs 5 cents.\nFinal answer: 5")

    def full_disk(target: Path, text: str) -> None:
        raise OSError(28, "No space left on device\x9b2J")

    monkeypatch.setattr(runner, "write_atomic", full_disk)
    monkeypatch.setenv("BENCHRIG_RESULTS_DIR", str(tmp_path / "results"))
    with pytest.raises(SystemExit) as ended:
        cli.main(["run", "bat-and-ball", "-m", "m", "-d", "replay", "-p", str(path),
                  "--runs", "2"])
    assert ended.value.code == 1
    out, err = capsys.readouterr()
    assert err.count("no result could be written") == 2
    assert "—, 2 errors" in out  # both attempts are counted, as errors beside the rate
    clean(out)
    assert "\x9b" not in err


def test_run_attempt_raises_unrecorded_only_when_the_error_result_cannot_be_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_task(TASKS / "bat-and-ball.md")
    path = answer_file(tmp_path, "The ball costs 5 cents.\nFinal answer: 5")

    def full_disk(target: Path, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner, "write_atomic", full_disk)
    with pytest.raises(UnrecordedAttempt) as raised:
        run_attempt(task, "m", ReplayDriver(), str(path), settings_for(task, Overrides()),
                    tmp_path / "results")
    assert raised.value.result["result"] == "error"
    validate(raised.value.result)


# ---- agents ------------------------------------------------------------------------------

def hostile_claude_stream() -> str:
    """The scenario's text: a confined fixture sees no file in the host's /tmp."""
    events = [
        {"type": "system", "subtype": "init", "session_id": "9c0d", "model": "sonnet\ud800",
         "tools": [], "claude_code_version": "2.0.14"},
        {"type": "x-unknown\ud800", "\ud800key": "\udfff"},
        {"type": "result", "subtype": "success", "is_error": True, "duration_ms": 10,
         "num_turns": 1, "result": "overloaded \ud800" + FORGED, "session_id": "9c0d",
         "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0}},
    ]
    return "".join(json.dumps(e) + "\n" for e in events)


def test_surrogates_and_controls_from_an_agent_leave_results_and_a_clean_terminal(
        tmp_path: Path, results_dir: Path) -> None:
    env = {"BENCHRIG_CLAUDE_BIN": str(FIXTURES / "claude"),
           "FAKE_AGENT_SCENARIO": hostile_claude_stream()}
    ran = cli_call("run", "lru-cache", "-m", "sonnet", "-d", "claude", "--runs", "2",
                   results_dir=results_dir, env=env)
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    found = results_in(results_dir)
    assert [r["result"] for r in found] == ["error", "error"]
    assert "\\ud800" in found[0]["error"]["message"]
    assert "—, 2 errors" in ran.stdout
    clean(ran.stdout)
    for sidecar in results_dir.glob("*.transcript.jsonl"):
        sidecar.read_text(encoding="utf-8")  # written whole, strict UTF-8


# ---- servers -----------------------------------------------------------------------------

def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1\ud800", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


@pytest.mark.slow
def test_a_surrogate_and_controls_in_a_server_stream_leave_results_and_clean_reports(
        results_dir: Path) -> None:
    reply = Reply(sse(chunk({"content": "Once upon a time \ud800" + FORGED}),
                      chunk(finish="stop" + FORGED), "[DONE]"),
                  content_type="text/event-stream")
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", "speed-short-decode", "-m", "m", "-d", "openai", "-p",
                       f"{server.url}/v1", "--runs", "2", results_dir=results_dir)
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    found = results_in(results_dir)
    assert len(found) == 2
    assert all(r["finish_reason"].startswith("stop\n") for r in found)  # the data, as sent
    assert "finish: stop" in ran.stdout  # the speed line shows the (neutralized) reason
    clean(ran.stdout)
    for form in ("table", "markdown", "csv"):
        shown = cli_call("summary", str(results_dir), "-f", form, results_dir=results_dir)
        assert shown.code == 0, shown.stderr
        clean(shown.stdout)


@pytest.mark.slow
def test_a_surrogate_in_a_server_error_body_leaves_a_result(results_dir: Path) -> None:
    reply = Reply.json({"error": {"message": "model \ud800 not found" + FORGED}}, 404)
    with Loopback({("POST", "/v1/chat/completions"): reply}) as server:
        ran = cli_call("run", "bat-and-ball", "-m", "m", "-d", "openai", "-p",
                       f"{server.url}/v1", "--runs", "2", results_dir=results_dir)
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    found = results_in(results_dir)
    assert [r["result"] for r in found] == ["error", "error"]
    assert "model \\ud800 not found" in found[0]["error"]["message"]
    assert "—, 2 errors" in ran.stdout
    clean(ran.stdout)


# ---- class 3: the terminal and the reports -----------------------------------------------

HOSTILE_AT_IMPORT = f"raise ValueError({'boom' + FORGED!r})\n"


@pytest.mark.slow
def test_a_failing_candidate_cannot_paint_a_pass_line(tmp_path: Path,
                                                      results_dir: Path) -> None:
    path = answer_file(tmp_path, fenced(HOSTILE_AT_IMPORT))
    ran = cli_call("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(path),
                   results_dir=results_dir)
    assert ran.code == 1
    (found,) = results_in(results_dir)
    assert found["result"] == "fail"
    clean(ran.stdout)
    assert "forged-line: pass" in ran.stdout  # shown, on the candidate's own line
    clean(cli_call("summary", str(results_dir), results_dir=results_dir).stdout)


EXAMPLE = json.loads((ROOT / "tests" / "fixtures" / "result-template.json").read_text())


def hostile_result(suite: str, task: str) -> dict[str, Any]:
    r = copy.deepcopy(EXAMPLE)
    r.update(model="evil" + FORGED, agent="agent\x1b]52;c;cm0gLXJm\x07" + FORGED,
             task=task + FORGED, suite=suite, notes="n" + FORGED,
             finish_reason="length" + FORGED)
    return r


@pytest.mark.parametrize("form", ["table", "markdown", "csv"])
def test_result_files_are_outside_text_to_every_renderer(form: str) -> None:
    results = [hostile_result("coding", "lru-cache"), hostile_result("speed", "speed-x")]
    text = render(results, form)
    clean(text)
    assert "evil" in text
    if form == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) == 2 and len(rows[1]) == len(rows[0])  # one header, one model


def test_the_cli_verdict_line_shows_outside_text_on_one_line() -> None:
    r = hostile_result("coding", "lru-cache")
    line = verdict_line("lru-cache", "m", "replay", r, "results/x.json")
    assert "\n" not in line
    clean(line)


def test_the_bundled_solutions_still_pass_unchanged(tmp_path: Path, results_dir: Path) -> None:
    """Sanitizing at the entry changes no ordinary answer."""
    good = (SOLUTIONS / "lru-cache.py").read_text()
    path = answer_file(tmp_path, fenced(good))
    ran = cli_call("run", "lru-cache", "-m", "oracle", "-d", "replay", "-p", str(path),
                   results_dir=results_dir)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert "lru-cache oracle replay: pass (2/2 checks)" in ran.stdout


class CrashingDriver:
    """A driver with a bug that strange input reaches: it raises something not a DriverError."""

    name, kind = "crashing", "runtime"

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: object) -> DriverOutput:
        raise KeyError("\ud800\x9b[2Kbroken")


def test_a_driver_that_crashes_leaves_a_harness_error_result(tmp_path: Path) -> None:
    task = load_task(TASKS / "bat-and-ball.md")
    done = run_attempt(task, "m", CrashingDriver(), None, settings_for(task, Overrides()),
                       tmp_path / "results")
    assert done.result["result"] == "error" and done.result["error"]["kind"] == "harness"
    assert "the crashing driver failed: KeyError" in done.result["error"]["message"]
    clean(done.result["error"]["message"])
    assert [r["result"] for r in results_in(tmp_path / "results")] == ["error"]


def test_stderr_messages_from_outside_words_are_printable(results_dir: Path) -> None:
    """An unknown suite is named back in the usage error: a name carrying a CSI and a line
    break reaches stderr made printable (ui's one path for stderr)."""
    ran = cli_call("run", "--suite", "x\x9b2J\nforged-line: pass", results_dir=results_dir)
    assert ran.code == 2
    assert "is not a suite" in ran.stderr
    clean(ran.stderr)


# ---- issue 21: invisible characters, formula cells, table cells, refused figures ---------

def test_every_format_character_is_shown_as_an_escape() -> None:
    """Zero-width space and joiners, word joiner, soft hyphen, tag characters (which spell
    hidden ASCII), and every other character of Unicode category Cf: made visible, so two
    names that differ only by one are never shown alike."""
    found = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    tags = [chr(c) for c in range(0xE0000, 0xE0080)]
    for char in [*found, *tags, "\u200b", "\u200c", "\u200d", "\u2060", "\u00ad"]:
        for shown in (printable(f"a{char}b"), label(f"a{char}b"), printable_lines(f"a{char}b")):
            assert char not in shown and shown.startswith("a\\"), (hex(ord(char)), shown)
    assert printable("gpt\u200b-4") == "gpt\\u200b-4"
    assert printable("hi\U000e0041\U000e0042") == "hi\\U000e0041\\U000e0042"
    twins = [hostile_result("coding", "lru-cache"), hostile_result("coding", "lru-cache")]
    twins[0]["model"], twins[1]["model"] = "gpt-4", "gpt-4\u200b"
    table = render(twins, "table", table_only=True)
    assert "gpt-4\\u200b " in table and "\u200b" not in table


FORMULA_NAMES = {"model": '=HYPERLINK("http://x.example","open")', "agent": "+cmd|' /C calc'!A0",
                 "task": "-2+3", "label": "@SUM(1+1)", "provider": "=1+1", "driver": "-x"}
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def formula_results() -> list[dict[str, Any]]:
    found = []
    for suite, task in (("coding", "lru-cache"), ("speed", "speed-x")):
        r = copy.deepcopy(EXAMPLE)
        r.update(FORMULA_NAMES, suite=suite, task=FORMULA_NAMES["task"] + task,
                 finish_reason="=stop")
        r["settings"]["think"] = r["settings"]["think_requested"] = "@think"
        validate(r)
        found.append(r)
    return found


@pytest.mark.parametrize("view", ["model", "attempt", "task"])
def test_no_csv_cell_from_a_result_can_start_a_formula(view: str) -> None:
    text = render(formula_results(), "csv", by="task" if view == "task" else "model",
                  per_attempt=view == "attempt")
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert any(c.startswith("'=HYPERLINK(\"http://x.example\",\"open\")") for c in cells)
    if view == "attempt":
        assert "'@think" in cells and "'+cmd|' /C calc'!A0" in cells
    live = [c for c in cells if c.startswith(("=", "+", "-", "@")) and not NUMBER.fullmatch(c)]
    assert live == []


def cell_count(line: str) -> int:
    """The cells of a Markdown table row: `|` that no backslash escapes, less one."""
    return re.sub(r"\\.", "", line).count("|") - 1


@pytest.mark.parametrize("by", ["model", "task"])
def test_outside_words_cannot_add_markdown_cells_or_markup(by: str) -> None:
    results = [hostile_result("coding", "lru-cache"), hostile_result("speed", "speed-x")]
    for r in results:
        r["task"] = "a|b|c"
        r["model"] = "m | [open](http://x.example) <b>&#x202e;`x`"
    text = render(results, "markdown", by=by)
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if line.startswith("|---"):  # a table: every row has the head's number of cells
            width = cell_count(lines[at - 1])
            for body in itertools.takewhile(lambda r: r.startswith("|"), lines[at + 1:]):
                assert cell_count(body) == width, (lines[at - 1], body)
    assert "a\\|b\\|c" in text and "\\](http" in text and "](http" not in text.replace(
        "\\](http", "")
    assert "<b>" not in text and "&#x202e;" not in text.replace("\\&#x202e;", "")


def test_the_html_drill_down_shows_the_figures_the_summary_counts() -> None:
    """A forged decode rate (900,000 t/s) and a figure the driver refused are shown as
    refused, with why, never as numbers; the summary leaves them out the same way."""
    from benchrig.report.build import build
    from benchrig.report.render_html import render_html

    forged, honest = hostile_result("coding", "lru-cache"), hostile_result("coding", "lru-cache")
    forged["metrics"].update(tokens_per_s=900_000.0, ttft_ms=50.0)
    forged["metrics"]["rejected"] = {"output_tokens": "more than the bytes received"}
    honest["metrics"].update(tokens_per_s=40.0, ttft_ms=50.0)
    page = render_html(build([forged, honest]))
    # the one drill-down is the sample browser's, rendered from the page's JSON data
    block = page[page.index('id="benchrig-data">') + 19:]
    drill = json.loads(block[:block.index("</script>")])["details"]
    assert len(drill) == 2
    figures = [{name: (value, why) for name, value, why in d["metrics"]} for d in drill]
    assert any(f["tokens_per_s"] == ("40", "") for f in figures)
    refused = next(f for f in figures if f["tokens_per_s"][0] != "40")
    assert refused["tokens_per_s"][0] == "rejected"  # the figure only in the reason
    assert not any(value.startswith("900") for d in drill for _, value, _ in d["metrics"])
    assert "900,000 is outside 0–50,000 tokens/s" in refused["tokens_per_s"][1]
    assert refused["output_tokens"] == ("rejected", "more than the bytes received")
    assert refused["ttft_ms"][0] == "50"
    # the summary's mean is of the one credible rate, and says it lacks the other
    assert "40.0 (1 rejected)" in render([forged, honest], "table", table_only=True)
