"""The load levels in the sample browser, in a real headless Chromium (as
tests/report/test_view.py drives it): each level listed as a result, opening to its
figures and its sweep's curve, as `report --html` writes it and as `benchrig view` serves it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, benchrig
from tests.helpers.result_sets import attempt, write
from tests.load.test_load_report import level
from tests.report.test_view import HOSTILE, _count, _no_marker, _shot, driver  # noqa: F401

pytestmark = pytest.mark.slow  # a browser start each
HOSTILE_MODEL = "m<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','m')\">"


def _results() -> list[dict[str, Any]]:
    levels = [level(c, rps, p99, model=HOSTILE_MODEL)
              for c, rps, p99 in ((1, 1.0, 10.0), (2, 2.0, 12.0), (4, 3.9, 40.0))]
    for lv in levels:
        lv["evidence"]["load"]["goodput"] = {"slo": {HOSTILE: 500.0}, "requests": 3,
                                             "share": 0.75, "per_s": 3.0}
        lv["evidence"]["load"]["error_examples"] = [HOSTILE]
    return [attempt("a", "t1", "pass"), attempt("a", "t2", "fail"), *levels]


def _open_level(browser: Any, concurrency: str) -> Any:
    """Filter the browser to the load suite, open the level of that concurrency."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    Select(browser.find_element(By.CSS_SELECTOR, "[data-filter=suite]")).select_by_value("load")
    # each level a row beside the attempts, counted as a level, never as an attempt
    assert _count(browser) == "0 of 2 attempts, 3 of 3 levels"
    rows = browser.find_elements(By.CSS_SELECTOR, "table.samples tr[data-row]")
    assert len(rows) == 3
    rows[0].click()
    WebDriverWait(browser, 10).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#sample-detail [data-curve]"))
    curve = browser.find_element(By.CSS_SELECTOR, "#sample-detail [data-curve]")
    target = next(r for r in curve.find_elements(By.CSS_SELECTOR, "tr[data-level-row]")
                  if r.find_element(By.TAG_NAME, "td").text == concurrency)
    index = target.get_attribute("data-level-row")  # the panel is made anew on the click
    target.click()
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.ID, "sample-detail").get_attribute("data-open") == index)
    return browser.find_element(By.ID, "sample-detail")


def _check_level(browser: Any, panel: Any) -> None:
    from selenium.webdriver.common.by import By

    text = panel.text
    assert "load level" in text and "request throughput (req/s) 3.9" in text
    assert "TTFT ms 4 20 40 40 1" in text  # n, p50, p90, p99, mean of the level opened
    assert "goodput (share meeting the SLOs) 0.75" in text
    curve = panel.find_element(By.CSS_SELECTOR, "[data-curve]")
    rows = curve.find_elements(By.CSS_SELECTOR, "tr[data-level-row]")
    assert [r.find_element(By.TAG_NAME, "td").text for r in rows] == ["1", "2", "4"]
    assert [r.get_attribute("class") for r in rows] == ["", "", "open"]
    assert "knee" in rows[2].text and "75%" in rows[2].text  # the knee and goodput
    assert "goodput against" in text and HOSTILE_MODEL in text  # names shown as text
    _no_marker(browser)


def test_a_static_report_lists_each_level_and_opens_it_to_its_curve(
        driver: Any, tmp_path: Path) -> None:  # noqa: F811
    folder = write(tmp_path / "r", _results())
    page = tmp_path / "report.html"
    ran = benchrig("report", str(folder), "--html", str(page), results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    driver.get(page.as_uri())
    assert driver.find_element("tag name", "html").get_attribute("data-viewer") == "ready"
    assert _count(driver) == "2 of 2 attempts, 3 of 3 levels"
    # the report's load section: the latency–throughput plane, its frontier, the SLOs
    plane = driver.find_element("css selector", "svg[data-chart=frontier]")
    assert len(plane.find_elements("css selector", "circle")) == 3
    assert plane.find_element("css selector", "polyline").get_attribute("points").count(",") == 3
    slo = driver.find_element("css selector", "[data-slo]").text
    assert "goodput: the share of requests meeting" in slo and "gnp.exe" in slo
    panel = _open_level(driver, "4")
    _check_level(driver, panel)
    _shot(driver, "viewer-load-level.png")


def test_view_serves_each_level_open_to_its_curve(driver: Any, tmp_path: Path  # noqa: F811
                                                  ) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    folder = write(tmp_path / "r", _results())
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "view", str(folder)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        driver.get(url)
        WebDriverWait(driver, 30).until(
            lambda d: d.find_element("tag name", "html").get_attribute("data-viewer") == "ready")
        _check_level(driver, _open_level(driver, "4"))
    finally:
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=20)[1]
    assert proc.returncode == 0, err
    assert "Traceback" not in err and json.dumps(HOSTILE) not in err
