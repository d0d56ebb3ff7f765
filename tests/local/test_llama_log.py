"""llama.cpp's own log lines never reach stderr raw: counted, and shown through textsafe only
when asked for (BENCHRIG_LLAMA_LOG=1)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from benchrig.local import llamalog
from tests.conftest import ROOT

ABORTED = """
from pathlib import Path
from benchrig.core.settings import Settings
from benchrig.drivers import get_driver
from benchrig.orchestrate.runner import produce
from benchrig.spec import load_tasks, task_paths

task = load_tasks(task_paths(["bat-and-ball"]))[0]
driver = get_driver("llamacpp")
produce(task, "smollm2", driver, None, Settings(max_tokens=1), Path("unused"))  # loaded
cut = produce(task, "smollm2", driver, None, Settings(timeout_s=0.05, max_tokens=4000),
              Path("unused"))  # the deadline fires inside llama_decode (its abort callback)
print(cut.result["error"]["message"])
"""


def _aborted(show: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != llamalog.SHOW_ENV}
    if show:
        env[llamalog.SHOW_ENV] = "1"
    return subprocess.run([sys.executable, "-c", ABORTED], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=300, check=False)


@pytest.mark.model
def test_an_aborted_generation_leaves_no_raw_llama_cpp_line_on_stderr() -> None:
    quiet = _aborted(show=False)
    assert quiet.returncode == 0 and "ran out" in quiet.stdout, quiet.stderr
    assert quiet.stderr == ""  # llama.cpp's "decode: removing memory module entries …"
    shown = _aborted(show=True)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stderr.splitlines()
    assert lines and all(line.startswith("llama.cpp: ") for line in lines), lines
    assert any("llama_decode: failed to decode" in line for line in lines), lines


def test_a_shown_line_is_printable_and_a_split_line_is_joined(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(llamalog._state, "show", True)
    monkeypatch.setitem(llamalog._state, "partial", "")
    before = llamalog.lines()
    with caplog.at_level(logging.WARNING, logger="benchrig.llama"):
        llamalog._take(3, b"evil \x1b[2J\x1b]0;owned\x07", None)
        llamalog._take(5, b" tail\n", None)  # continues the error line
        llamalog._take(1, b"info only\n", None)
        llamalog._take(3, b"\xff\xfe broken utf-8\n", None)
    shown = [r.getMessage() for r in caplog.records]
    assert shown[0] == "llama.cpp: evil \\x1b[2J\\x1b]0;owned\\x07 tail"
    assert all(m.isprintable() for m in shown) and len(shown) == 3
    assert llamalog.lines() - before == 2  # the warnings and errors, not the info line


def test_every_llama_is_made_by_new_llama_which_takes_the_log_first() -> None:
    """The rule is structural: a Llama made anywhere else would log raw again."""
    package = ROOT / "benchrig"
    makers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                    if "Llama(" in p.read_text(encoding="utf-8"))
    assert makers == ["local/model.py"]


def test_a_run_says_how_many_lines_it_kept_off_the_terminal(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from benchrig.cli.run import _say_llama_log

    monkeypatch.setitem(llamalog._state, "show", False)
    monkeypatch.setitem(llamalog._state, "lines", 3)
    _say_llama_log()
    assert "llama.cpp logged 3 warning line(s), not shown (BENCHRIG_LLAMA_LOG=1 shows them)" \
        in capsys.readouterr().err
    monkeypatch.setitem(llamalog._state, "show", True)  # shown already: nothing more to say
    _say_llama_log()
    assert capsys.readouterr().err == ""


def test_ctrl_c_inside_the_callback_is_handed_back_not_printed_raw(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception cannot leave a ctypes callback (Python prints "Exception ignored"): a
    Ctrl-C landing in it is raised again in the main thread once llama.cpp has returned."""
    import _thread

    handed: list[bool] = []

    def interrupted(line: str, limit: int = 0) -> str:
        raise KeyboardInterrupt

    monkeypatch.setitem(llamalog._state, "show", True)
    monkeypatch.setattr(llamalog, "printable", interrupted)
    monkeypatch.setattr(_thread, "interrupt_main", lambda: handed.append(True))
    llamalog._take(3, b"error\n", None)  # returns: nothing raised into C
    assert handed == [True]
