"""The sample browser at scale in headless Chromium: a report page (file or URL) timed at load
and at a filter (`python -m bench.viewer PAGE_OR_URL`), or `benchrig view FOLDER` timed from
its start to the page's first byte and to rows visible
(`python -m bench.viewer --serve FOLDER [--rounds 5]`)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent
FILTER = """
var select = document.querySelector('[data-filter=model]');
var start = performance.now();
select.value = select.options[2].value;
select.dispatchEvent(new Event('change'));
var filtered = performance.now() - start;
start = performance.now();
var search = document.querySelector('[data-search]');
search.value = 'cache';
search.dispatchEvent(new Event('input'));
return [filtered, performance.now() - start,
        document.querySelector('[data-count]').textContent];
"""


def _driver() -> Any:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))


def page(target: str) -> None:
    """One page's load and a filter and a search in it."""
    driver = _driver()
    try:
        driver.get(target)
        WebDriverWait(driver, 60).until(lambda d: d.execute_script(
            "return document.documentElement.getAttribute('data-viewer')") == "ready")
        loaded = driver.execute_script(
            "var t = performance.getEntriesByType('navigation')[0];"
            "return [t.domContentLoadedEventEnd, t.loadEventEnd];")
        filtered, searched, count = driver.execute_script(FILTER)
        print(f"DOMContentLoaded {loaded[0]:.0f} ms, load {loaded[1]:.0f} ms; "
              f"filter {filtered:.1f} ms, search {searched:.1f} ms; {count.strip()}")
    finally:
        driver.quit()


def serve(folder: str, rounds: int) -> None:
    """`benchrig view FOLDER` started `rounds` times (the browser already running): seconds
    from its start to its URL printed, to the page's first byte, and to the rows in the
    page (the browser's data-viewer="ready"), then the report part's first byte."""
    driver = _driver()
    figures: dict[str, list[float]] = {"URL printed": [], "page, first byte": [],
                                       "rows visible in Chromium": [],
                                       "report part, first byte": []}
    loads = [os.getloadavg()[0]]
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "benchrig.cli", "view", folder],
                                    cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            try:
                assert proc.stdout is not None
                url = proc.stdout.readline().strip()
                figures["URL printed"].append(time.perf_counter() - start)
                with urllib.request.urlopen(url, timeout=60) as response:
                    response.read(1)
                    figures["page, first byte"].append(time.perf_counter() - start)
                driver.get(url)
                WebDriverWait(driver, 60, poll_frequency=0.02).until(
                    lambda d: d.execute_script("return document.documentElement"
                                               ".getAttribute('data-viewer')") == "ready")
                figures["rows visible in Chromium"].append(time.perf_counter() - start)
                with urllib.request.urlopen(url + "report", timeout=60) as response:
                    response.read(1)
                    figures["report part, first byte"].append(time.perf_counter() - start)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            loads.append(os.getloadavg()[0])
    finally:
        driver.quit()
    files = sum(1 for _ in Path(folder).glob("*.json"))
    print(f"`benchrig view` over {files} result files, {rounds} rounds; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"load average {min(loads):.1f}–{max(loads):.1f}")
    for name, values in figures.items():
        print(f"| {name} | {statistics.median(values):.2f} s | "
              f"{min(values):.2f}–{max(values):.2f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="a page's file:// or http:// URL, or with --serve "
                        "a results folder")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.serve:
        serve(args.target, args.rounds)
    else:
        page(args.target)


if __name__ == "__main__":
    main()
