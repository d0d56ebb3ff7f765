"""`benchrig report --html`: one self-contained page, checked as written and as a real
browser (Debian's chromium, headless) renders it: scorecard numbers, non-empty SVG charts,
a drill-down the page's script renders from its data (a heat-map link opens it), and hostile
result text shown, never executed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, cli_call
from tests.helpers.result_sets import attempt, write

ARTIFACTS = ROOT / "test-artifacts"
MARK = "data-pwned"
# What a candidate could answer, or a model be named, to run script in the reader's browser.
HOSTILE = ('</pre><script>document.documentElement.setAttribute("data-pwned","script")'
           '</script><img src=x onerror="document.documentElement.setAttribute('
           "'data-pwned','img')\"><b>bold</b>")
HOSTILE_NAME = "evil<svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">"


def _results() -> list[dict]:  # type: ignore[type-arg]
    results = [attempt("alpha", "t1", "pass"), attempt("alpha", "t2", "pass"),
               attempt("alpha", "t3", "pass"), attempt("alpha", "t4", "fail",
                                                       answer_excerpt=HOSTILE),
               attempt("alpha", "c1", "pass", suite="coding", ttft_ms=300.0)]
    evil = attempt(HOSTILE_NAME, "t1", "fail", notes=HOSTILE, answer_excerpt=HOSTILE)
    evil["checks"]["details"][0]["message"] = HOSTILE
    return [*results, evil, attempt(HOSTILE_NAME, "t2", "error")]


@pytest.fixture
def report(tmp_path: Path) -> Path:
    folder = write(tmp_path / "r", _results())
    out = tmp_path / "report.html"
    ran = cli_call("report", str(folder), "--html", str(out), results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    assert ran.stdout.strip() == f"{out} (7 results)"
    return out


def test_the_page_is_self_contained_and_escaped(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    assert page.count("<script>") == 1  # its own, at the end
    assert "<script>document" not in page and "<img src=x" not in page
    # the answer is data in the JSON block (the script shows it as text, see below)
    assert "\\u003cscript\\u003edocument.documentElement" in page
    assert "evil&lt;svg onload=" in page and "<svg onload" not in page
    assert re.search(r'http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;'
                     r" style-src &#39;sha256-[^ ]+&#39;; script-src &#39;sha256-", page)
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing from the network


def _chromium() -> str:
    found = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                        "google-chrome")) if p), None)
    if found is None:
        pytest.skip("no chromium: `make browser` installs Debian's (apt-get install chromium); "
                    "the HTML report's browser test is skipped")
    return found


def _browser(tmp_path: Path, *args: str) -> str:
    done = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=3000", *args],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow  # two browser starts
def test_the_report_in_a_real_browser(report: Path, tmp_path: Path) -> None:
    # the heat map's link to alpha's t4 (the hostile answer)
    found = re.search(r'<td>t4</td><td></td>\n<td class="cell [^"]+"><a href="#(g0-t\d+)">',
                      report.read_text(encoding="utf-8"))
    assert found, "the heat map links alpha's t4"
    target = f"{report.as_uri()}#{found[1]}"
    dom = _browser(tmp_path, "--dump-dom", target)
    # its own script ran (so script runs at all here), the hostile text's did not
    assert 'data-report-script="ran"' in dom
    assert not re.search(rf"<[a-z]+[^<>]*\s{MARK}=", dom)  # no element got the marker
    # scorecard numbers: alpha passed 4 of 5, its reasoning 3 of 4
    card = dom[dom.index('data-model="alpha · llamacpp"'):]
    assert re.search(r"data-pass-rate[^>]*>80\.0%<", card)
    assert "3/4" in card[:card.index("</table>")]
    # charts: every SVG chart has bars of non-zero width
    charts = re.findall(r'<svg class="chart"[^>]*>(.*?)</svg>', dom, re.S)
    assert len(charts) >= 3
    for chart in charts:
        widths = [float(w) for w in re.findall(r'<rect[^>]* width="([\d.]+)"', chart)]
        assert widths and max(widths) > 0
    # no drill-down written by the server: the page's script renders it from the data, the
    # link's target pinned (alpha's one t4 attempt) and opened
    assert 'class="attempt"' not in report.read_text(encoding="utf-8")
    assert re.search(r'data-count="">\s*1 of 7 attempts', dom)
    panel = dom[dom.index('id="sample-detail"'):]
    assert re.search(r'id="sample-detail" data-open="\d+"', dom)
    assert "alpha · llamacpp · t4 — fail" in panel
    assert "&lt;script&gt;document.documentElement" in panel  # shown as text
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    _browser(tmp_path, "--window-size=1280,1800", f"--screenshot={shot}",
             target)
    assert shot.stat().st_size > 10_000


def test_a_drilldown_keeps_line_breaks_and_shows_controls() -> None:
    """An answer's lines stay lines; a terminal escape, a bidi override or a lone surrogate
    is shown as an escape, never passed on to the page."""
    from benchrig.textsafe import printable_lines

    assert printable_lines("def f():\n    return 1\n") == "def f():\n    return 1\n"
    shown = printable_lines("ok\x1b[2J\n\u202egnp.exe\n\ud800")
    assert shown == "ok\\x1b[2J\n\\u202egnp.exe\n\\ud800"
    assert printable_lines("x" * 50, 10).startswith("x" * 10 + "… [40 more")
