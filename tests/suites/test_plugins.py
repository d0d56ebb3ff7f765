"""A package adds a suite through the `benchrig.suites` entry-point group: installed (a
dist-info with entry_points.txt on the path), a task naming it is validated by the suite's
own rules at load and run through the suite's own attempt shape, end to end through the CLI.
The suite is the example of docs/writing-a-suite.md, read from that page."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchrig.core import DriverOutput, Metrics, Transcript
from benchrig.drivers.base import DriverRequest
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.resultio.files import validate
from benchrig.spec import load_task
from benchrig.suites import BUILTIN
from tests.conftest import ROOT, answer_file, benchrig, cli_call

DOC = ROOT / "docs" / "writing-a-suite.md"


def doc_block(language: str) -> str:
    """The first ```<language> block of docs/writing-a-suite.md."""
    found = re.search(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert found, f"no {language} block in {DOC}"
    return found.group(1)


def install_suite(folder: Path) -> dict[str, str]:
    """The documented suite as pip would leave it: its module and a dist-info naming its
    entry point; returns the environment that puts it on the path."""
    folder.mkdir()
    (folder / "steady_suite.py").write_text(doc_block("python"), encoding="utf-8")
    info = folder / "steady_suite-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: steady-suite\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[benchrig.suites]\nmine = steady_suite:MINE\n",
                                           encoding="utf-8")
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}


def task_file(folder: Path, text: str) -> Path:
    name = re.search(r"^id: (\S+)$", text, re.M)
    assert name
    path = folder / f"{name.group(1)}.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_suite_added_by_an_entry_point_runs_end_to_end(tmp_path: Path,
                                                        results_dir: Path) -> None:
    env = install_suite(tmp_path / "site")
    task = task_file(tmp_path, doc_block("markdown"))
    ran = benchrig("run", str(task), "-m", "oracle", "-d", "replay", "-p",
                   str(answer_file(tmp_path, "hello")), results_dir=results_dir, env=env)
    assert ran.code == 0, ran.stderr
    (path,) = results_dir.glob("*-steady-hello-*[0-9a-f].json")
    result = json.loads(path.read_text(encoding="utf-8"))
    validate(result)  # schema-valid, as the runner already checked before writing it
    assert (result["suite"], result["result"], result["driver"]) == ("mine", "pass", "replay")
    # the suite's own report figure (its SuiteReport) in the text, the CSV and the JSON
    assert_summaries_show_the_figure(lambda *args: benchrig(*args, results_dir=results_dir,
                                                            env=env).stdout)


def assert_summaries_show_the_figure(summary: Callable[..., str]) -> None:
    """The documented suite's figure (`changed`, 0: the replayed answer held) on its line."""
    line = next(line for line in summary("summary").splitlines()
                if line.strip().startswith("mine "))
    assert "100.0% (1/1) · answers changed 0 · avg TTFT" in line
    rows = list(csv.DictReader(io.StringIO(summary("summary", "--format", "csv"))))
    assert [row["mine_changed"] for row in rows] == ["0"]
    assert rows[0]["mine_pass_rate"] == "1.0000"
    (model,) = json.loads(summary("summary", "--format", "json"))["models"]
    assert model["suites"]["mine"]["figures"] == {"changed": 0}
    assert model["suites"]["mine"]["passed"] == 1


class Fickle:
    """A runtime whose answers are given: one per round it is asked."""

    name, kind = "fickle", "runtime"

    def __init__(self, answers: Iterator[str]) -> None:
        self.answers = answers

    def preflight(self, model: str, provider: str | None) -> None:
        pass

    def run(self, request: DriverRequest) -> DriverOutput:
        return DriverOutput(Transcript(answer=next(self.answers)), Metrics())


def test_the_suite_s_own_shape_runs_the_attempt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    """In process: the task's suite, not the runner, decides how the model is asked — the
    documented suite asks twice, and an answer that changes fails however right it is."""
    install_suite(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(BUILTIN, "mine", "steady_suite:MINE")
    task = load_task(task_file(tmp_path, doc_block("markdown")))
    answers = iter(["hello", "hello there"])

    done = run_attempt(task, "m", Fickle(answers), None, settings_for(task, Overrides()),
                       tmp_path / "results")
    assert (done.result["suite"], done.result["result"]) == ("mine", "fail")
    assert done.result["notes"] == "the answer changed between 2 rounds"
    assert next(answers, None) is None  # both rounds were asked


@pytest.mark.slow
def test_a_plugin_suite_refuses_a_task_its_rules_refuse(tmp_path: Path,
                                                        results_dir: Path) -> None:
    env = install_suite(tmp_path / "site")
    task = task_file(tmp_path, doc_block("markdown").replace("rounds: 2", "rounds: 9"))
    ran = benchrig("validate", str(task), results_dir=results_dir, env=env)
    assert ran.code == 2
    assert "options.rounds: a steady task asks 2 to 5 rounds" in ran.stderr
    typo = task_file(tmp_path, doc_block("markdown").replace("suite: mine", "suite: mne")
                     .replace("id: steady-hello", "id: steady-typo"))
    ran = benchrig("validate", str(typo), results_dir=results_dir, env=env)
    assert ran.code == 2
    assert ("suite: no suite 'mne' is registered (known: speed, coding, reasoning, context, "
            "polish, tool_use, load, mine)") in ran.stderr


@pytest.mark.slow
def test_a_plugin_suite_is_chosen_by_name(tmp_path: Path, results_dir: Path) -> None:
    env = install_suite(tmp_path / "site")
    (tmp_path / "tasks").mkdir()
    task_file(tmp_path / "tasks", doc_block("markdown"))
    ran = benchrig("run", str(tmp_path / "tasks"), "--suite", "mine", "-m", "oracle", "-d",
                   "replay", "-p", str(answer_file(tmp_path, "hello")),
                   results_dir=results_dir, env=env)
    assert ran.code == 0, ran.stderr
    assert [json.loads(p.read_text())["suite"] for p in results_dir.glob("*[0-9a-f].json")
            ] == ["mine"]


@pytest.fixture
def mine_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The documented suite registered in this process (the report caches each facet)."""
    from benchrig.report import facets, panel

    install_suite(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(BUILTIN, "mine", "steady_suite:MINE")
    facets.facet.cache_clear()
    panel.panel.cache_clear()
    yield
    facets.facet.cache_clear()
    panel.panel.cache_clear()


def test_a_plugin_suite_s_report_figure_is_in_every_summary(
        tmp_path: Path, mine_registered: None) -> None:
    """In process: an answer that changed is counted by the suite's own figure, on its line of
    the text summary, in its CSV column and its JSON field."""
    task = load_task(task_file(tmp_path, doc_block("markdown")))
    answers = iter(["hello", "hello there", "hello", "hello"])

    results = tmp_path / "results"
    for index in range(2):
        run_attempt(task, "m", Fickle(answers), None, settings_for(task, Overrides()), results,
                    run_index=index)

    def summary(*args: str) -> str:
        ran = cli_call(*args, results_dir=results)
        assert ran.code == 0, ran.stderr
        return ran.stdout

    line = next(line for line in summary("summary").splitlines()
                if line.strip().startswith("mine "))
    assert "· answers changed 1 ·" in line
    (row,) = csv.DictReader(io.StringIO(summary("summary", "--format", "csv")))
    assert row["mine_changed"] == "1"
    (model,) = json.loads(summary("summary", "--format", "json"))["models"]
    assert model["suites"]["mine"]["figures"] == {"changed": 1}
