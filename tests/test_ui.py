"""Off a terminal, stderr lines are written without rich (~35 ms of imports), exactly as rich
would write them there."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable

import pytest

from benchrig import ui

TEXTS = ["plain words", "", "[red]not markup[/red] [link=https://x]y[/link]",
         "back\\slash [bold]x[/bold] \\ end", "\\[escaped\\]", ":warning: :smile: :x:",
         "wide 漢字 ✓ ｗｉｄｅ", "a" * 300, "\x1b[2Jclear\x9b2J\u202eright-to-left",
         "line\nbreak\ttab\rreturn", "  spaced  ", "surrogate \udcff end", "%s {0} %(x)s"]


@pytest.mark.parametrize("say", [ui.info, ui.warn, ui.error])
def test_a_plain_line_is_what_rich_writes_off_a_terminal(
        say: Callable[[str], None], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    ui.stderr.cache_clear()  # rich reads FORCE_COLOR when the console is made
    written = {}
    for styled in (False, True):
        monkeypatch.setattr(sys, "stderr", io.StringIO())
        monkeypatch.setattr(ui, "styled", lambda styled=styled: styled)
        for text in TEXTS:
            say(text)
        written[styled] = sys.stderr.getvalue()
    assert written[False] == written[True]
    assert written[False].count("\n") == len(TEXTS)


def test_a_final_backslash_is_written_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich's markup escape adds a backslash to a final one, and prints both
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(ui, "styled", lambda: False)
    ui.error("C:\\temp\\")
    assert sys.stderr.getvalue() == "error: C:\\temp\\\n"


def test_rich_is_used_on_a_terminal_or_when_the_environment_forces_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    cases = [(io.StringIO(), {}, False), (Terminal(), {}, True),
             (io.StringIO(), {"FORCE_COLOR": "1"}, True),
             (io.StringIO(), {"TTY_COMPATIBLE": "1"}, True)]
    for stream, variables, expected in cases:
        ui.styled.cache_clear()
        monkeypatch.setattr(sys, "stderr", stream)
        with monkeypatch.context() as scoped:
            for name, value in variables.items():
                scoped.setenv(name, value)
            assert ui.styled() is expected
    ui.styled.cache_clear()
