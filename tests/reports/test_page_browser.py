"""The report's web page in a real headless Chromium (the Debian package, driven by its chromedriver
through selenium): a month of prices in a real database, ``planner report --out`` writes the page, and
the browser shows every table's rows and every chart's points with no console error (a Content-Security-
Policy violation would be one), in English and Chinese. A screenshot of each is kept as a test artefact
in $PLANNER_TEST_ARTIFACTS (default: test-artifacts/ under the repository).

Skipped when /usr/bin/chromium, /usr/bin/chromedriver or selenium is absent: plain pytest passes without
them; .ci/run installs them."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.report_month import OFFERS, fill
from tests.helpers.tools import missing

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_ENV = "PLANNER_TEST_ARTIFACTS"
# No network: Chromium's own calls home (updates, sync, field trials) would be refused by a closed network.
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)

try:
    from selenium import webdriver
except ImportError:
    missing("selenium is not installed (pip install -e '.[test]')")
if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    missing(
        f"needs Chromium and its driver at {CHROMIUM} and {CHROMEDRIVER} "
        "(apt-get install chromium chromium-driver)"
    )


def artifacts() -> Path:
    folder = Path(os.environ.get(ARTIFACTS_ENV) or ROOT / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


# Every table's body rows, and for every chart its box and what is drawn in it.
MEASURE = """
const rows = {};
for (const t of document.querySelectorAll('table[data-table]')) {
  rows[t.dataset.table] = t.tBodies[0].rows.length;
}
const charts = [...document.querySelectorAll('svg.chart')].map(svg => {
  const box = svg.getBoundingClientRect();
  const line = svg.querySelector('polyline');
  return {gpu: svg.dataset.gpu, width: box.width, height: box.height,
          points: line ? line.points.numberOfItems : 0,
          lineBox: line ? [line.getBBox().width, line.getBBox().height] : null,
          dots: [...svg.querySelectorAll('circle')].filter(c => c.getBoundingClientRect().width > 0).length,
          labels: svg.querySelectorAll('text').length};
});
const hidden = [...document.querySelectorAll('section')].filter(s => s.getBoundingClientRect().height === 0);
return {rows, charts, hidden: hidden.length, scripts: document.scripts.length,
        title: document.title, lang: document.documentElement.lang,
        overflow: document.documentElement.scrollWidth > window.innerWidth,
        wide: [...document.querySelectorAll('.table-wrap')]
          .filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.firstChild.dataset.table)};
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_report_page_renders_in_headless_chromium(browser, run_cli, engine, db_url, tmp_path, lang):
    if not db_url.startswith("sqlite"):
        pytest.skip("one database is enough to look at a page")
    started = time.monotonic()
    fill(engine, tmp_path)
    out = tmp_path / "out"
    result = run_cli("--lang", lang, "report", "--out", str(out))
    assert result.exit_code == 0, result.output
    (page,) = out.glob("*_report.html")

    browser.get_log("browser")  # nothing from an earlier page
    browser.get(page.as_uri())
    seen = browser.execute_script(MEASURE)
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == [], errors  # a CSP violation, a failed load or a script error

    cheapest = len(OFFERS)
    assert seen["rows"]["cheapest"] == cheapest and seen["rows"]["stock"] == cheapest
    assert seen["rows"]["changes"] > 0 and seen["rows"]["health"] >= 6 and seen["rows"]["stock-detail"] > 0
    assert len(seen["charts"]) == cheapest
    for chart in seen["charts"]:
        assert chart["width"] > 200 and chart["height"] > 100, chart
        assert chart["points"] >= 2 and chart["dots"] == chart["points"], chart
        assert chart["lineBox"][0] > 100, chart  # the line spans the weeks drawn
        assert chart["labels"] >= 8, chart  # price ticks, dates and both axes' names
    assert seen["hidden"] == 0 and seen["scripts"] == 0 and not seen["overflow"], seen
    assert seen["wide"] == [], seen  # every table fits a 1280-pixel window without scrolling sideways
    assert seen["lang"] == ("zh-CN" if lang == "zh" else "en")
    assert browser.title == seen["title"] and ("GPU 租用价格报告" in seen["title"]) == (lang == "zh")

    shot = artifacts() / f"report_page_{lang}.png"
    # The whole page, not the window: Chromium's own full-page capture (DevTools protocol).
    captured = browser.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    shot.write_bytes(base64.b64decode(captured["data"]))
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot} ({time.monotonic() - started:.1f} s)")
    if lang == "zh" and not cjk_fonts():
        print("no CJK font: the Chinese screenshot shows boxes (apt-get install fonts-noto-cjk)")


def cjk_fonts() -> list[str]:
    """The fonts fontconfig (which Chromium uses on Linux) has for Chinese; empty when none or unknown."""
    if not shutil.which("fc-list"):
        return []
    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=30)
    return found.stdout.split()
