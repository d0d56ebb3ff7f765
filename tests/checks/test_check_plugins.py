"""A package adds a check type through the `benchrig.checks` entry-point group: installed (a
dist-info with entry_points.txt on the path), its type is known, a task naming it is validated
by its validator at load and judged by it, end to end through the CLI."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import answer_file, benchrig

PLUGIN = '''
from benchrig.core.check import check
from benchrig.core.verdict import CheckDetail, Verdict


def word_problems(meta):
    word = meta["check"].get("word")
    if isinstance(word, str) and word.strip():
        return []
    return ["check.word: a shout check needs the word to shout"]


@check("shout", validate=word_problems)
def shout(task, transcript, settings, context):
    word = str(task.check["word"]).upper()
    ok = word in transcript.answer
    message = f"{word!r} {'shouted' if ok else 'not shouted'}"
    return Verdict("pass" if ok else "fail", (CheckDetail("shout", ok, message, 0.0),), message)


not_a_check = "a plain string"
'''
# A plugin that keeps its own log open and never closes it, as plenty of code does: what it
# wrote must survive the process's exit (an early os._exit would drop the unflushed buffer).
LOGGING = '''
import os
from benchrig.core.check import check
from benchrig.core.verdict import CheckDetail, Verdict

LOG = open(os.environ["LOGGED_CHECK_LOG"], "a", encoding="utf-8")


@check("logged")
def logged(task, transcript, settings, context):
    LOG.write(f"judged {task.id}\\n")
    return Verdict("pass", (CheckDetail("logged", True, "logged", 0.0),), "logged")
'''
TASK = """---
id: {id}
suite: reasoning
language: en
difficulty: easy
tags: [demo]
timeout_s: 10
check:
  type: {type}
{extra}---

Say hello, loudly.
"""


def install_plugin(folder: Path, entry: str = "shout = shout_check:shout",
                   source: str = PLUGIN, module: str = "shout_check") -> dict[str, str]:
    """The plugin as pip would leave it: its module and a dist-info naming its entry point;
    returns the environment that puts it on the path."""
    folder.mkdir()
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    info = folder / "shout_check-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-check\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[benchrig.checks]\n{entry}\n",
        encoding="utf-8")
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}


def task(folder: Path, name: str, kind: str, extra: str = "") -> Path:
    path = folder / f"{name}.md"
    path.write_text(TASK.format(id=name, type=kind, extra=extra), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_check_type_added_by_an_entry_point_validates_and_judges(
        tmp_path: Path, results_dir: Path) -> None:
    env = install_plugin(tmp_path / "site")
    good = task(tmp_path, "shout-hello", "shout", "  word: hello\n")
    ran = benchrig("validate", str(good), results_dir=results_dir, env=env)
    assert ran.code == 0, ran.stderr
    # without the plugin installed, the same task is refused naming the known types
    ran = benchrig("validate", str(good), results_dir=results_dir)
    assert ran.code == 2
    assert f"{good}: check.type: no check 'shout' is registered (known: " in ran.stderr
    # the plugin's own validator refuses what its check cannot use
    wordless = task(tmp_path, "shout-nothing", "shout")
    ran = benchrig("validate", str(wordless), results_dir=results_dir, env=env)
    assert ran.code == 2
    assert f"{wordless}: check.word: a shout check needs the word to shout" in ran.stderr
    # judged by the plugin, through the runner, into a valid result
    for answer, verdict in (("HELLO THERE", "pass"), ("hello there", "fail")):
        for old in results_dir.glob("*"):
            old.unlink()
        ran = benchrig("run", str(good), "-m", "oracle", "-d", "replay", "-p",
                       str(answer_file(tmp_path, answer)), results_dir=results_dir, env=env)
        [result_file] = results_dir.glob("*.json")
        result = json.loads(result_file.read_text(encoding="utf-8"))
        assert result["result"] == verdict, (ran.stderr, result)
        assert result["checks"]["details"][0]["name"] == "shout"


def test_an_entry_point_that_is_not_a_check_is_refused_by_name(
        tmp_path: Path, results_dir: Path) -> None:
    env = install_plugin(tmp_path / "site", "broken = shout_check:not_a_check")
    path = task(tmp_path, "broken", "broken")
    ran = benchrig("validate", str(path), results_dir=results_dir, env=env)
    assert ran.code == 2, ran.stderr
    assert ("check 'broken': shout_check:not_a_check is not a check named 'broken'"
            in ran.stderr), textwrap.shorten(ran.stderr, 400)
    assert "Traceback" not in ran.stderr
    # installed, it stops a run of any task before anything runs: every check is loaded
    # before a driver runs, and a check that cannot load is never skipped unseen
    ran = benchrig("run", "bat-and-ball", "-m", "oracle", "-d", "replay", "-p",
                   str(answer_file(tmp_path, "Final answer: 0.05")), results_dir=results_dir,
                   env=env)
    assert ran.code == 2 and "is not a check named 'broken'" in ran.stderr, ran.stderr
    assert list(results_dir.iterdir()) == []


def test_what_a_plugin_wrote_to_a_file_it_never_closed_survives_the_exit(
        tmp_path: Path, results_dir: Path) -> None:
    log = tmp_path / "judged.log"
    env = {**install_plugin(tmp_path / "site", "logged = logged_check:logged", LOGGING,
                          "logged_check"),
           "LOGGED_CHECK_LOG": str(log)}
    path = task(tmp_path, "logged-hello", "logged")
    ran = benchrig("run", str(path), "-m", "oracle", "-d", "replay", "-p",
                   str(answer_file(tmp_path, "hello")), results_dir=results_dir, env=env)
    assert ran.code == 0, ran.stderr
    assert "logged-hello oracle replay: pass" in ran.stdout
    assert log.read_text(encoding="utf-8") == "judged logged-hello\n"
