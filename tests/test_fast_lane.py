"""The test suite's own rules on waiting: a test waits for what it is about, never for a poll
or a timer it does not test (docs/security.md, "A test waits for an event, not a clock")."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

# the helper that runs them, and this file, which names the call it looks for
EXEMPT = {ROOT / "tests" / "helpers" / "serving.py", Path(__file__).resolve()}


def test_every_test_server_is_run_by_the_helper_that_stops_it_at_once() -> None:
    """`serve_forever` polls for a stop every 0.5 s unless told otherwise: a server a test
    stood up that way cost the test about half a second at its end (~0.5 s of each of
    hundreds of tests). `tests/helpers/serving.running` is the one place that runs one."""
    found = [path.relative_to(ROOT).as_posix()
             for path in sorted((ROOT / "tests").rglob("*.py"))
             if path not in EXEMPT and re.search(r"\.serve_forever\b", path.read_text("utf-8"))]
    assert not found, f"run a server without tests.helpers.serving.running: {found}"
