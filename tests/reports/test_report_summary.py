"""The report e-mail's summary: its "Cheapest per GPU-hour" table shows the first models of the cheapest
table in the table's order (the GPUs teams rent first: ``reports.data.cheapest_frame``), never re-sorted
by price, so cheap old cards cannot push the data-centre GPUs out; and in Chinese with language "zh"."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from reports.build import Report
from reports.summary import summarise


def _report(models: int) -> Report:
    day = dt.date(2026, 12, 1)
    # Named A00..A19 so that alphabetical order is the dearest first.
    cheapest = pd.DataFrame(
        {
            "gpu_model": [f"A{i:02d}" for i in range(models)],
            "cny_per_gpu_hour": [float(100 - i) for i in range(models)],
            "provider": "aliyun",
            "instance_type": "ecs.x",
            "region": "cn-beijing",
            "billing": "on_demand",
            "observed_at_utc": pd.Timestamp("2026-12-01T00:00:00Z"),
            "cny_per_gpu_hour_basis": "on_demand, per hour",
            "on_demand_cny_per_gpu_hour": [float(100 - i) for i in range(models)],
        }
    )
    prices = pd.DataFrame({"provider": ["aliyun"], "from_snapshot": [False]})
    changes = pd.DataFrame(columns=["change_pct", "since", "gpu_model", "provider", "instance_type", "region",
                                    "billing", "old_cny_per_gpu_hour", "new_cny_per_gpu_hour"])  # fmt: skip
    health = pd.DataFrame(columns=["provider", "status", "started_at_utc", "error"])
    tables = {"prices": prices, "cheapest": cheapest, "changes": changes, "health": health}
    return Report(day=day, as_of=day, generated_at=dt.datetime(2026, 12, 1, tzinfo=dt.UTC), tables=tables)


def test_the_summary_keeps_the_cheapest_tables_order_and_says_how_many_it_shows():
    text = summarise(_report(20), top=3).text
    section = text.split("Cheapest per GPU-hour")[1].split("Biggest price moves")[0]
    assert "the first 3 of 20 GPU models, the GPUs teams rent first" in section  # shown and known
    shown = [model for model in (f"A{i:02d}" for i in range(20)) if model in section]
    assert shown == ["A00", "A01", "A02"]  # the table's first rows, though A19 is cheaper
    assert section.index("A00") < section.index("A01") < section.index("A02")


def test_the_summary_in_chinese_uses_the_teams_words():
    summary = summarise(_report(2), lang="zh")
    assert summary.subject == "GPU 价格 2026-12-01：1 条价格，0 处变动"
    assert "每卡时最低价" in summary.text and "阿里云 ecs.x（cn-beijing）" in summary.text
    assert "100.00 元/卡时（按量付费，按小时）" in summary.text
    assert "与前一天或前一周相比，没有价格变动。" in summary.text
    assert '<html lang="zh-CN">' in summary.html and "阿里云" in summary.html
    assert "on_demand" not in summary.text  # billing in the team's words, not the machine's
