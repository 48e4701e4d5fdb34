"""The report's web page (``reports.page``): its sections, one row per cheapest GPU, a chart per GPU
with its points, hostile provider text escaped, nothing fetched, both languages through the catalogue,
and ``planner report`` writing and listing it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from reports.page import CSP, money, nice_ticks, render_page, write_page
from tests.helpers.report_month import (
    HOSTILE_ERROR,
    HOSTILE_INSTANCE,
    HOSTILE_REGION,
    OFFERS,
    REPORT_DAY,
    fill,
    month_report,
)
from vocab.words import say

SECTIONS = ("cheapest", "trends", "stock", "changes", "health")


class Parsed(HTMLParser):
    """What a browser would build, counted: elements by tag, rows by table, attributes, script text."""

    def __init__(self, page: str):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: dict[str, int] = {}
        self.sections: list[str] = []
        self._table: list[str] = []
        self._in_body = False
        self._in_style = False
        self.text: list[str] = []  # what people read: every text outside <style>
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        if tag == "table":
            self._table.append(found.get("data-table") or "?")
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows[self._table[-1]] = self.rows.get(self._table[-1], 0) + 1
        elif tag == "section":
            self.sections.append(found.get("id") or "?")
        self._in_style = tag == "style"

    def handle_data(self, data: str) -> None:
        if not self._in_style:
            self.text.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False
        if tag == "table":
            self._table.pop()
            self._in_body = False

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)


@pytest.fixture
def report(engine, tmp_path):  # noqa: ANN001, ANN201
    fill(engine, tmp_path)
    return month_report(engine)


def test_the_page_has_every_section_a_row_per_gpu_and_a_chart_per_gpu(report):
    page = Parsed(render_page(report, "en"))
    assert page.sections == list(SECTIONS)
    cheapest = list(report.tables["cheapest"]["gpu_model"])
    assert len(cheapest) == len(OFFERS) and page.rows["cheapest"] == len(cheapest)
    assert page.rows["stock"] == len(cheapest)
    assert page.rows["stock-detail"] == len(report.tables["availability"])
    assert page.rows["changes"] == len(report.tables["changes"]) > 0
    assert page.rows["health"] == len(report.tables["health"])
    svgs = [a for t, a in page.tags if t == "svg"]
    assert [a["data-gpu"] for a in svgs] == cheapest  # the cheapest table's order, not re-sorted
    points = report.trend.groupby("gpu_model").size()
    assert page.count("circle") == points.sum() and page.count("polyline") == len(cheapest)
    for tag, attrs in page.tags:
        if tag == "polyline":
            pairs = attrs["points"].split()
            assert len(pairs) >= 2 and all(re.fullmatch(r"[\d.]+,[\d.]+", p) for p in pairs)


def test_the_page_keeps_the_cheapest_tables_order(report):
    frame = report.tables["cheapest"]
    flipped = frame.iloc[::-1].reset_index(drop=True)
    report.tables["cheapest"] = flipped
    html = render_page(report, "en")
    at = [html.index(f'data-gpu="{m}"') for m in flipped["gpu_model"]]
    assert at == sorted(at)


def test_hostile_provider_text_is_escaped(report):
    for lang in ("en", "zh"):
        html = render_page(report, lang)
        for hostile in (HOSTILE_REGION, HOSTILE_INSTANCE, HOSTILE_ERROR):
            assert hostile not in html
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
        assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
        page = Parsed(html)
        assert page.count("script") == 0 and page.count("img") == 0
        assert "&lt;b&gt;api&lt;/b&gt;" in html and HOSTILE_ERROR in " ".join(page.text)  # shown as text
        assert not [a for _, a in page.tags if any(k.startswith("on") for k in a)]


def test_nothing_is_fetched_when_the_page_is_viewed(report):
    html = render_page(report, "en")
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in html
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    page = Parsed(html)
    for tag, attrs in page.tags:
        for name in ("src", "href", "srcset", "action", "poster", "data"):
            assert name not in attrs or not re.match(r"\s*(https?:)?//", attrs[name] or ""), (tag, attrs)
    assert page.count("link") == 0 and page.count("script") == 0 and "@import" not in html
    assert "url(" not in html


def test_the_chinese_page_speaks_the_teams_words(report):
    html = render_page(report, "zh")
    assert '<html lang="zh-CN">' in html
    for words in ("阿里云", "腾讯云", "火山引擎", "按量付费", "包月", "售罄", "有货", "失败", "元/卡时"):
        assert words in html, words
    for key in ("page.cheapest.title", "page.trends.title", "page.stock.title", "page.changes.title",
                "page.health.title", "page.col.offer", "page.chart.x_axis"):  # fmt: skip
        assert say(key, "zh") in html and say(key, "en") not in html, key
    shown = " ".join(Parsed(html).text)
    assert "on_demand" not in shown and "sold_out" not in shown  # no machine word for people


def test_the_english_page_is_english(report):
    html = render_page(report, "en")
    assert '<html lang="en">' in html
    for words in ("Aliyun", "Tencent Cloud", "on demand", "monthly", "sold out", "failed", "CNY/GPU-h"):
        assert words in html, words
    assert not re.search(r"[\u4e00-\u9fff]", html)  # not a Chinese character


def test_money_has_two_decimals_and_four_for_hourly_prices_under_one_yuan():
    assert money(28.6) == "28.60" and money(12948) == "12,948.00"
    assert money(0.21) == "0.2100" and money(0.62, per_hour=False) == "0.62"
    assert money(None) == money(float("nan")) == "–"
    assert nice_ticks(52.5) == [0, 20, 40, 60] and nice_ticks(0.65)[-1] >= 0.65


def test_a_report_on_an_empty_database_is_a_page_that_says_so(engine, tmp_path):
    report = month_report(engine)
    page = Parsed(render_page(report, "zh"))
    assert page.sections == list(SECTIONS) and page.count("svg") == 0
    html = render_page(report, "zh")
    assert say("page.no_prices", "zh") in html and say("page.cheapest.none", "zh") in html
    path = write_page(report, tmp_path, "en")
    assert path.name == f"{REPORT_DAY}_report.html" and path.read_text(encoding="utf-8").startswith(
        "<!DOCTYPE"
    )


def test_report_out_writes_the_page_in_the_teams_language(run_cli, engine, tmp_path):
    fill(engine, tmp_path)
    out = tmp_path / "out"
    result = run_cli("--lang", "zh", "report", "--out", str(out), "--no-chart", "--format", "json")
    assert result.exit_code == 0, result.output
    files = {f["table"]: f for f in json.loads(result.stdout)["files"]}
    (page,) = out.glob("*_report.html")
    assert files["report"]["path"] == str(page) and files["report"]["rows"] == len(OFFERS)
    html = page.read_text(encoding="utf-8")
    assert "按量付费" in html and say("page.trends.off", "zh") in html
    assert len(list(out.glob("*.csv"))) == 5  # the CSV files stay
    table = run_cli("--lang", "en", "report", "--out", str(out), "--no-chart")
    assert page.name in table.stdout and "web page" in table.stdout
    assert "Aliyun" in page.read_text(encoding="utf-8")


def test_a_page_over_the_bundled_snapshot_says_so(run_cli, tmp_path):
    out = tmp_path / "out"
    result = run_cli("--lang", "zh", "report", "--out", str(out), "--no-chart")
    assert result.exit_code == 0, result.output
    (page,) = out.glob("*_report.html")
    html = page.read_text(encoding="utf-8")
    assert say("page.from_snapshot", "zh") in html and Parsed(html).rows["cheapest"] > 3
