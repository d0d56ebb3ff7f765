"""The sample browser at scale: open a report page (file or `benchrig view` URL) in headless
Chromium and time its load and a filter (`python -m bench.viewer PAGE_OR_URL`)."""

from __future__ import annotations

import shutil
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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


def main(target: str) -> None:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    try:
        driver.get(target)
        loaded = driver.execute_script(
            "var t = performance.getEntriesByType('navigation')[0];"
            "return [t.domContentLoadedEventEnd, t.loadEventEnd,"
            " document.documentElement.getAttribute('data-viewer')];")
        filtered, searched, count = driver.execute_script(FILTER)
        print(f"DOMContentLoaded {loaded[0]:.0f} ms, load {loaded[1]:.0f} ms ({loaded[2]}); "
              f"filter {filtered:.1f} ms, search {searched:.1f} ms; {count.strip()}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main(sys.argv[1])
