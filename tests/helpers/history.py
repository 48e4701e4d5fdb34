"""A stored price history over the last week, for the history and chart tests."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from db import store

TODAY = dt.datetime.now(dt.UTC).date()


def day(n: int) -> dt.datetime:
    """Two in the morning UTC, ``n`` days ago."""
    return dt.datetime.combine(TODAY - dt.timedelta(days=n), dt.time(2))


# Tencent GT4 (A100-40GB) on demand, oldest first: flat, then a 10% cut, then sold out.
TENCENT = [(6, "30", "available"), (5, "30", "available"), (4, "30", "available"), (3, "27", "available"),
           (2, "27", "sold_out"), (1, "27", "sold_out")]  # fmt: skip

# AutoDL A100 per GPU: cheapest listing, median listing, idle/total, the most idle on one machine.
AUTODL = [(2, "3.68", "3.90", 4, 32, 2), (1, "3.50", "3.80", 0, 32, 0)]


def seed(engine) -> None:
    gt4, a2 = ("tencent", "ap-beijing", "GT4.4XLARGE96"), ("tencent", "ap-guangzhou", "GT4.4XLARGE96")
    autodl = ("autodl", "beijing-A", "A100-PCIE-40GB")
    for ago, price, status in TENCENT:
        with engine.begin() as conn:
            run = store.start_run(conn, "tencent", "refresh")
            ids = store.upsert_instances(
                conn, [store.InstanceRow(*gt4, "A100-40GB", 1), store.InstanceRow(*a2, "A100-40GB", 1)]
            )
            rows = [
                store.PriceRow(gt4, "on_demand", Decimal(price), "CNY", "hour", Decimal(price), day(ago)),
                store.PriceRow(a2, "on_demand", Decimal("33"), "CNY", "hour", Decimal("33"), day(ago)),
                store.PriceRow(
                    gt4, "monthly", Decimal("12948"), "CNY", "month", Decimal("17.736986"), day(ago)
                ),
            ]
            store.insert_prices(conn, rows, ids, run)
            stock = [store.AvailabilityRow(gt4, "on_demand", day(ago), status)]
            stock.append(store.AvailabilityRow(a2, "on_demand", day(ago), "available"))
            store.insert_availability(conn, stock, ids, run)
            store.finish_run(conn, run, "ok")
    for ago, low, median, idle, total, most in AUTODL:
        with engine.begin() as conn:
            run = store.start_run(conn, "autodl", "refresh")
            ids = store.upsert_instances(conn, [store.InstanceRow(*autodl, "A100-40GB", 1)])
            row = store.PriceRow(
                autodl,
                "on_demand",
                Decimal(low),
                "CNY",
                "hour",
                Decimal(low),
                day(ago),
                median_price=Decimal(median),
            )
            store.insert_prices(conn, [row], ids, run)
            status = "available" if idle else "sold_out"
            store.insert_availability(
                conn,
                [store.AvailabilityRow(autodl, "on_demand", day(ago), status, idle, total, idle, most, most)],
                ids,
                run,
            )
            store.finish_run(conn, run, "ok")
