"""The hot reads (issue 8): the latest price and the latest stock of each series are found by index
seeks per series, and give exactly what a brute-force pass over every stored row gives, whatever the
filters, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from sqlalchemy import select, text

from db import queries, store
from db.schema import availability, instances, prices

INSTANCES = [
    ("tencent", "ap-beijing", "GT4", "A100-40GB", 1),
    ("tencent", "ap-shanghai", "GT4", "A100-40GB", 1),
    ("aliyun", "cn-beijing", "gn7", "A100-80GB", 8),
    ("autodl", "west-B", "RTX4090", "RTX4090-24GB", 1),
    ("volcengine", "cn-shanghai", "ini2", "H800-80GB", 8),
    ("aliyun", "cn-hangzhou", "never-priced", "A100-80GB", 8),
]
MODES = ("on_demand", "monthly", "spot", "yearly")


def seed(engine) -> None:
    """Series of different lengths: some modes stop being sold, one instance was never priced."""
    day0 = dt.date(2026, 10, 1)
    with engine.begin() as conn:
        run = store.start_run(conn, "*", "import")
        ids = store.upsert_instances(conn, [store.InstanceRow(*i) for i in INSTANCES])
        rows = []
        for n, inst in enumerate(INSTANCES[:-1]):
            for m, mode in enumerate(MODES[: 2 + n % 3]):
                for d in range(3 + 4 * n + m):
                    price = Decimal(10 + n + m) + Decimal(d % 3) / 4
                    at = dt.datetime.combine(day0 + dt.timedelta(days=d), dt.time(3))
                    rows.append(store.PriceRow(inst[:3], mode, price, "CNY", "hour", price, at))
        store.insert_prices(conn, rows, ids, run)
        for r in range(4):  # refreshes that stated stock for some series
            run = store.start_run(conn, "autodl" if r % 2 else "tencent", "refresh")
            at = dt.datetime(2026, 10, 20, r)
            stock = [
                store.AvailabilityRow(
                    inst[:3], mode, at, "sold_out" if (r + n) % 3 == 0 else "available", r, 8
                )
                for n, inst in enumerate(INSTANCES[:-1])
                for mode in MODES[: 1 + (r + n) % 3]
            ]
            store.insert_availability(conn, stock, ids, run)


def brute_latest(conn, models=None, providers=None, regions=None, billing=None) -> list[tuple]:
    rows = conn.execute(
        select(instances, prices.c.billing, prices.c.observed_on, prices.c.price).join(
            prices, prices.c.instance_id == instances.c.id
        )
    ).all()
    latest: dict[tuple, tuple] = {}
    for row in rows:
        if models and row.gpu_model not in models:
            continue
        if providers and row.provider not in providers:
            continue
        if regions and row.region not in regions:
            continue
        if billing and row.billing not in billing:
            continue
        key = (row.id, row.billing)
        if key not in latest or latest[key][2] < row.observed_on:
            latest[key] = (row.id, row.billing, row.observed_on, row.price)
    return sorted(latest.values())


@pytest.mark.parametrize(
    ("models", "providers", "regions", "billing"),
    [
        (None, None, None, None),
        (["A100-40GB", "A100-80GB"], None, None, None),
        (["A100-40GB"], ["tencent"], ["ap-shanghai"], None),
        (None, ["aliyun", "autodl"], None, ["monthly", "spot"]),
        (["H800-80GB"], None, None, ["yearly"]),
        (["RTX4090-24GB"], ["tencent"], None, None),
    ],
)
def test_latest_prices_match_a_pass_over_every_row(engine, models, providers, regions, billing):
    seed(engine)
    with engine.connect() as conn:
        got = queries.latest_prices(conn, models, providers, regions, billing)
        expected = brute_latest(conn, models, providers, regions, billing)
    assert sorted((r.instance_id, r.billing, r.observed_at.date(), r.price) for r in got) == expected
    keys = [(r.provider, r.region, r.instance_type, r.billing) for r in got]
    assert keys == sorted(keys)  # the documented order


def test_latest_availability_matches_a_pass_over_every_row(engine):
    seed(engine)
    with engine.connect() as conn:
        every = conn.execute(select(availability)).all()
        wanted = {(i, b) for i, b in conn.execute(select(prices.c.instance_id, prices.c.billing).distinct())}
        got = queries.latest_availability(conn, wanted)
    newest: dict[tuple, object] = {}
    for row in every:
        key = (row.instance_id, row.billing)
        if key in wanted and (key not in newest or newest[key].run_id < row.run_id):
            newest[key] = row
    assert got.keys() == newest.keys() and len(got) > 3
    for key, row in newest.items():
        assert (got[key].stock_status, got[key].idle_gpus, got[key].observed_at) == (
            row.stock_status,
            row.idle_gpus,
            row.observed_at,
        )


def test_latest_reads_seek_each_series_on_sqlite(engine):
    if engine.url.get_backend_name() != "sqlite":
        pytest.skip("the plan is checked on SQLite; PostgreSQL plans depend on table statistics")
    seed(engine)
    wanted = select(instances.c.id).where(instances.c.gpu_model == "A100-40GB")
    statements = [
        queries._latest_statement(["A100-40GB"], None, None, None),  # noqa: SLF001
        queries.latest_rows(availability, "run_id", wanted).select(),
    ]
    with engine.connect() as conn:
        for statement in statements:
            sql = statement.compile(engine, compile_kwargs={"literal_binds": True})
            plan = [str(r[-1]) for r in conn.execute(text(f"EXPLAIN QUERY PLAN {sql}"))]
            scans = [line for line in plan if line.startswith("SCAN")]
            assert all(re.fullmatch(r"SCAN latest_(series|step)", line) for line in scans), plan
            assert any("USING INDEX sqlite_autoindex" in line for line in plan), plan
