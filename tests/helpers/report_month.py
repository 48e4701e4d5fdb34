"""A month of prices in a real database for the report's web page: five GPU models at four providers,
a price a day that moves, spot and monthly offers, stock, a failed refresh and hostile provider text."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import update
from sqlalchemy.engine import Engine

from reports.build import Report
from tests.conftest import write_csv
from vocab import IMPORT_REQUIRED_COLUMNS

NEWEST = dt.date(2026, 11, 20)  # the newest price: the trend window is the 30 days to it
REPORT_DAY = dt.date(2026, 11, 21)
HOSTILE_REGION = '"><img src=x onerror=alert(1)>'
HOSTILE_INSTANCE = "<script>alert('x')</script>"
HOSTILE_ERROR = "<script>document.title='pwned'</script> 403 from <b>api</b>"
STOCK_COLUMNS = ["stock_status", "idle_gpus", "total_gpus"]

# (provider, region, instance type, GPU model, GPUs, on-demand CNY per instance-hour on the newest day)
OFFERS = [
    ("aliyun", "cn-beijing", "ecs.gn8v-c8g1.16xlarge", "H800-80GB", 8, 400.0),
    ("tencent", "ap-shanghai", "GT4.41XLARGE948", "A100-40GB", 8, 229.0),
    ("volcengine", "cn-beijing", "ecs.gni3cl.11xlarge", "L20-48GB", 1, 8.9),
    ("autodl", "west-A", "4090-F1", "RTX4090-24GB", 1, 1.98),  # renamed hostile after the import
    ("aliyun", "cn-hangzhou", "ecs.gn7i-c8g1.2xlarge", "A10-24GB", 1, 0.62),
]


def month_rows() -> list[dict[str, object]]:
    """A price every third day over four weeks for each offer (ending at NEWEST), falling then rising."""
    rows: list[dict[str, object]] = []
    for n, (provider, region, instance, model, gpus, price) in enumerate(OFFERS):
        for days_before in range(27, -1, -3):
            swing = 1 + 0.002 * ((days_before + 5 * n) % 11) - 0.008 * (days_before == 27)
            rows.append(
                {
                    "provider": provider,
                    "region": region,
                    "instance_type": instance,
                    "gpu_model": model,
                    "gpu_count": gpus,
                    "billing": "on_demand",
                    "price": f"{price * swing:.4f}",
                    "currency": "CNY",
                    "observed_at": (NEWEST - dt.timedelta(days=days_before)).isoformat(),
                    "stock_status": "sold_out" if model == "H800-80GB" else "available",
                    "idle_gpus": 0 if model == "H800-80GB" else 3 + n,
                    "total_gpus": gpus * 4,
                }
            )
        rows.append(
            {**rows[-1], "billing": "monthly", "price": f"{price * 730 * 0.7:.2f}", "stock_status": "low"}
        )
    rows.append({**rows[-1], "billing": "spot", "price": "0.21", "stock_status": ""})
    return rows


def fill(engine: Engine, tmp_path: Path) -> None:
    """Import the month of prices, then give one instance hostile names (an import refuses them; a
    database written before it did holds them) and record a failed refresh with hostile error text."""
    from db.schema import instances, scrape_runs
    from planner.ingest.importer import import_csv

    columns = [*IMPORT_REQUIRED_COLUMNS, *STOCK_COLUMNS]
    import_csv(engine, write_csv(tmp_path / "month.csv", month_rows(), columns), fx())
    started = dt.datetime.combine(NEWEST, dt.time(2))
    with engine.begin() as conn:
        conn.execute(
            update(instances)
            .where(instances.c.instance_type == "4090-F1")
            .values(region=HOSTILE_REGION, instance_type=HOSTILE_INSTANCE)
        )
        conn.execute(
            scrape_runs.insert().values(
                provider="volcengine", kind="refresh", started_at=started,
                finished_at=started + dt.timedelta(seconds=42), status="failed", offers_seen=0,
                prices_stored=0, prices_changed=0, error=HOSTILE_ERROR,
            )
        )  # fmt: skip


def fx() -> dict[str, object]:
    from planner.config import load_config

    return dict(load_config(env={}).section("fx"))


def month_report(engine: Engine, day: dt.date = REPORT_DAY) -> Report:
    """The report of REPORT_DAY over the filled database, as ``planner report`` builds it (every
    region: the hostile AutoDL offer is in the cheapest table)."""
    from planner.answers.report import cheapest_for
    from planner.providers import PROVIDERS
    from reports.build import build_report

    return build_report(engine, day, known_providers=PROVIDERS, cheapest=cheapest_for((), (), fx(), "all"))
