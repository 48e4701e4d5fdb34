"""The report e-mail's summary: its "Cheapest per GPU-hour" table shows the cheapest models."""

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


def test_the_summary_lists_the_cheapest_models_not_the_first_alphabetically():
    text = summarise(_report(20), top=3).text
    section = text.split("Cheapest per GPU-hour")[1].split("Biggest price moves")[0]
    assert "the 3 cheapest of 20 GPU models" in section  # the counts shown and known
    shown = [model for model in (f"A{i:02d}" for i in range(20)) if model in section]
    assert shown == ["A17", "A18", "A19"]
    assert section.index("A19") < section.index("A18") < section.index("A17")  # cheapest first
