"""The mark every HTML report carries in its head, and the test that a file bears it."""

from __future__ import annotations

from pathlib import Path

# Written by render_html (templates/report.html.j2) into <head>; `report --html` overwrites
# only a file that carries it (or the title reports had before it), so a result or any
# other file named by mistake is never replaced.
MARKER = '<meta name="generator" content="BenchRig report">'
_BEFORE_MARKER = "<title>BenchRig report</title>"
_HEAD_BYTES = 4096  # the marker sits in the first lines; reading more proves nothing


def is_report(path: Path) -> bool:
    """Whether `path` is an HTML file BenchRig wrote: a doctype, then the marker in its
    <head>, within the first few KiB (a JSON result quoting the marker does not pass)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    if not head.lstrip("\ufeff").lower().startswith("<!doctype html>"):
        return False
    head = head.split("</head>", 1)[0]
    return MARKER in head or _BEFORE_MARKER in head
