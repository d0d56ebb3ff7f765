"""The sample browser in a real headless Chromium driven by Selenium (clicks, typing), as
`report --html` writes it and as `benchrig view` serves it; screenshots in test-artifacts/."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, benchrig
from tests.helpers.result_sets import attempt, write

ARTIFACTS = ROOT / "test-artifacts"
MARK = "data-pwned"
HOSTILE = ('</pre><script>document.documentElement.setAttribute("data-pwned","script")'
           '</script><img src=x onerror="document.documentElement.setAttribute('
           "'data-pwned','img')\">\u202egnp.exe\u200b</script><!--")
HOSTILE_NAME = "evil<svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">"

pytestmark = pytest.mark.slow  # a browser start each


def _results() -> list[dict[str, Any]]:
    made = [attempt(f"model-{m}", f"t{t}", "pass" if (m + t) % 3 else "fail",
                    answer_excerpt=f"Final answer: {m * t}\n```python\nprint({t})\n```")
            for m in range(12) for t in range(5)]
    made.append(attempt(HOSTILE_NAME, "t1", "fail", answer_excerpt=HOSTILE, notes=HOSTILE))
    made.append(attempt("model-0", "t9", "error"))
    made.append(attempt("model-1", "t9", "unsupported", suite="tool_use"))
    return made


@pytest.fixture
def driver() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="`make browser` installs "
                                    "selenium and chromium-driver")
    browser = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    if browser is None or chromedriver is None:
        pytest.skip("no chromium/chromedriver: `make browser` installs them")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1800"):
        options.add_argument(flag)
    made = webdriver.Chrome(options=options, service=Service(chromedriver))
    try:
        yield made
    finally:
        made.quit()


def _shot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / name
    shot.unlink(missing_ok=True)
    driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000


def _count(driver: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.CSS_SELECTOR, "[data-count]").text)


def _no_marker(driver: Any) -> None:
    marked = driver.execute_script(
        "return document.querySelectorAll('[data-pwned]').length")
    assert marked == 0  # no element, the root included, got the marker


def test_the_sample_browser_filters_searches_and_opens(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    folder = write(tmp_path / "r", _results())
    page = tmp_path / "report.html"
    ran = benchrig("report", str(folder), "--html", str(page), results_dir=tmp_path)
    assert ran.code == 0, ran.stderr
    driver.get(page.as_uri())
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("data-viewer") == "ready"
    assert _count(driver).startswith("63 of 63")
    # a click filters
    Select(driver.find_element(By.CSS_SELECTOR, "[data-filter=model]")).select_by_value(
        "model-3")
    assert _count(driver).startswith("5 of 63")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-filter=model]")).select_by_value("")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-filter=result]")).select_by_value(
        "unsupported")
    assert _count(driver).startswith("1 of 63")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-filter=result]")).select_by_value("")
    # failures only, then a search in the answers
    driver.find_element(By.CSS_SELECTOR, "[data-failures]").click()
    failing = int(_count(driver).split()[0])
    assert 0 < failing < 63
    driver.find_element(By.CSS_SELECTOR, "[data-failures]").click()
    driver.find_element(By.CSS_SELECTOR, "[data-search]").send_keys("gnp.exe")
    assert _count(driver).startswith("1 of 63")
    # sorting by a column puts the model named with markup first (it sorts before "m")
    driver.find_element(By.CSS_SELECTOR, "[data-search]").clear()
    driver.find_element(By.CSS_SELECTOR, "[data-search]").send_keys("\b")
    driver.find_element(By.CSS_SELECTOR, "th[data-sort=model]").click()
    first = driver.find_element(By.CSS_SELECTOR, "table.samples tr[data-row] td")
    assert first.text.startswith("evil<svg onload=")  # shown as text
    # a drill-down opens: the hostile attempt, its answer shown, nothing run
    first.click()
    panel = driver.find_element(By.ID, "sample-detail")
    assert "\\u202egnp.exe\\u200b" in panel.text  # bidi and zero-width shown as escapes
    assert "<script>document.documentElement" in panel.text
    assert "this task across models" in panel.text
    _no_marker(driver)
    _shot(driver, "viewer-static.png")
    # the extracted code highlighted in another attempt's drill-down
    Select(driver.find_element(By.CSS_SELECTOR, "[data-filter=model]")).select_by_value(
        "model-2")
    driver.find_element(By.CSS_SELECTOR, "table.samples tr[data-row]").click()
    assert driver.find_element(By.CSS_SELECTOR, "#sample-detail mark.code").text.startswith(
        "```python")


def _get(url: str, method: str = "GET", host: str | None = None) -> tuple[int, bytes]:
    headers = {"Host": host} if host else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method,
                                                           headers=headers),
                                    timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, b""


def test_view_serves_read_only_and_stops_on_ctrl_c(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    folder = write(tmp_path / "r", _results())
    hostile = next(p for p in folder.glob("*.json")
                   if json.loads(p.read_text(encoding="utf-8"))["model"] == HOSTILE_NAME)
    result = json.loads(hostile.read_text(encoding="utf-8"))
    result["transcript_file"] = hostile.with_suffix(".transcript.jsonl").name
    hostile.write_text(json.dumps(result), encoding="utf-8")
    hostile.with_suffix(".transcript.jsonl").write_text(
        json.dumps({"kind": "prompt", "messages": [{"role": "user", "content": "Say 5"}]})
        + "\n" + json.dumps({"kind": "answer", "text": "whole " + HOSTILE, "thinking": "hm"})
        + "\n", encoding="utf-8")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())
    proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "view", str(folder)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        # listen first: the page is a shell that holds no result (sent before any is read);
        # its rows and its report part are fetched, each made once
        status, shell = _get(url)
        assert status == 200 and b'{"served":true,"rows":null}' in shell
        assert b"model-3" not in shell and len(shell) < 40_000
        status, rows = _get(url + "rows")
        assert status == 200 and len(json.loads(rows)["rows"]) == 63
        status, part = _get(url + "report")
        assert status == 200 and b"data-pass-rate" in part and b'id="benchrig-data"' not in part
        assert _get(url + "attempt/0")[0] == 200
        assert _get(url, "POST")[0] == 405  # read only
        assert _get(url + "attempt/0", host="evil.example:80")[0] == 421  # DNS rebinding
        assert _get(url + "attempt/9999")[0] == 404
        assert _get(url + "transcript/..%2f..%2fetc%2fpasswd")[0] == 404
        driver.get(url)
        WebDriverWait(driver, 30).until(  # the shell fetches its rows after it loads
            lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("data-viewer") == "ready")
        driver.find_element(By.CSS_SELECTOR, "[data-search]").send_keys("gnp.exe")
        driver.find_element(By.CSS_SELECTOR, "table.samples tr[data-row]").click()
        WebDriverWait(driver, 10).until(
            lambda d: "whole </pre>" in d.find_element(By.ID, "sample-detail").text)
        panel = driver.find_element(By.ID, "sample-detail").text
        assert "Say 5" in panel and "hm" in panel  # prompt and thinking from the sidecar
        _no_marker(driver)
        _shot(driver, "viewer-served.png")
        driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe.report"))
        assert driver.find_elements(By.CSS_SELECTOR, "[data-pass-rate]")  # the report part
        driver.switch_to.default_content()
        link = driver.find_element(By.CSS_SELECTOR, "#sample-detail a").get_attribute("href")
        status, body = _get(str(link))
        assert status == 200 and b"Say 5" in body
    finally:
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=20)[1]
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir()) == before
