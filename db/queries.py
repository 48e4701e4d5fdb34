"""The hot reads, done in SQL on indexes: the latest price per instance and billing mode, a window
of recent history for a handful of instances, and what the database holds at all.

Nothing here loads the whole history into Python: the latest-price query groups on the unique index
(instance_id, billing, observed_on) and joins back, and the history query is bounded by the instances
asked for and a date window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import Select, and_, exists, func, select
from sqlalchemy.engine import Connection

from db.schema import instances, prices, scrape_runs


@dataclass(frozen=True)
class LatestPrice:
    instance_id: int
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: float
    vcpus: int | None
    memory_gb: float | None
    gpu_note: str | None
    billing: str
    price: Decimal
    currency: str
    unit: str
    cny_per_gpu_hour: Decimal
    tiers: str | None
    observed_at: dt.datetime
    source: str | None
    run_kind: str


def has_prices(conn: Connection) -> bool:
    return bool(conn.execute(select(exists().where(prices.c.id.is_not(None)))).scalar())


def latest_prices(
    conn: Connection,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
    regions: Sequence[str] | None = None,
    billing: Sequence[str] | None = None,
) -> list[LatestPrice]:
    """The latest observation of every (instance, billing mode) matching the filters."""
    statement = _latest_statement(gpu_models, providers, regions, billing)
    return [LatestPrice(*row) for row in conn.execute(statement)]


def _latest_statement(
    gpu_models: Sequence[str] | None,
    providers: Sequence[str] | None,
    regions: Sequence[str] | None,
    billing: Sequence[str] | None,
) -> Select:
    inst_filter = []
    if gpu_models:
        inst_filter.append(instances.c.gpu_model.in_(list(gpu_models)))
    if providers:
        inst_filter.append(instances.c.provider.in_(list(providers)))
    if regions:
        inst_filter.append(instances.c.region.in_(list(regions)))
    wanted_instances = select(instances.c.id).where(*inst_filter)

    latest_filter = [prices.c.instance_id.in_(wanted_instances)]
    if billing:
        latest_filter.append(prices.c.billing.in_(list(billing)))
    # Grouping on the unique index (instance_id, billing, observed_on) finds each latest day without
    # touching table rows; the join back reads exactly one row per (instance, billing).
    latest = (
        select(prices.c.instance_id, prices.c.billing, func.max(prices.c.observed_on).label("day"))
        .where(*latest_filter)
        .group_by(prices.c.instance_id, prices.c.billing)
        .subquery("latest")
    )
    return (
        select(
            instances.c.id,
            instances.c.provider,
            instances.c.region,
            instances.c.instance_type,
            instances.c.gpu_model,
            instances.c.gpu_count,
            instances.c.vcpus,
            instances.c.memory_gb,
            instances.c.gpu_note,
            prices.c.billing,
            prices.c.price,
            prices.c.currency,
            prices.c.unit,
            prices.c.cny_per_gpu_hour,
            prices.c.tiers,
            prices.c.observed_at,
            prices.c.source,
            scrape_runs.c.kind,
        )
        .select_from(latest)
        .join(
            prices,
            and_(
                prices.c.instance_id == latest.c.instance_id,
                prices.c.billing == latest.c.billing,
                prices.c.observed_on == latest.c.day,
            ),
        )
        .join(instances, instances.c.id == prices.c.instance_id)
        .join(scrape_runs, scrape_runs.c.id == prices.c.run_id)
        .order_by(instances.c.provider, instances.c.region, instances.c.instance_type, prices.c.billing)
    )


def recent_prices(
    conn: Connection, keys: Iterable[tuple[int, str]], since: dt.date
) -> dict[tuple[int, str], list[tuple[dt.date, Decimal]]]:
    """(day, unit price) observed on or after ``since`` for each (instance_id, billing), oldest first."""
    keys = set(keys)
    out: dict[tuple[int, str], list[tuple[dt.date, Decimal]]] = {k: [] for k in keys}
    iids = sorted({k[0] for k in keys})
    for start in range(0, len(iids), 500):
        chunk = iids[start : start + 500]
        rows = conn.execute(
            select(prices.c.instance_id, prices.c.billing, prices.c.observed_on, prices.c.price)
            .where(prices.c.instance_id.in_(chunk), prices.c.observed_on >= since)
            .order_by(prices.c.observed_on)
        )
        for iid, billing, day, price in rows:
            if (iid, billing) in out:
                out[(iid, billing)].append((day, price))
    return out


def snapshot_run(conn: Connection) -> tuple[dt.datetime, str | None] | None:
    """(loaded_at, source) of the bundled-snapshot load, if the database holds one."""
    row = conn.execute(
        select(scrape_runs.c.started_at, scrape_runs.c.source)
        .where(scrape_runs.c.kind == "snapshot", scrape_runs.c.status == "ok")
        .order_by(scrape_runs.c.id.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row else None


def export_rows(
    conn: Connection, gpu_models: Sequence[str] | None = None, providers: Sequence[str] | None = None
):
    """Every stored observation (oldest first), streamed, with its instance's columns."""
    filters = []
    if gpu_models:
        filters.append(instances.c.gpu_model.in_(list(gpu_models)))
    if providers:
        filters.append(instances.c.provider.in_(list(providers)))
    query = (
        select(
            instances.c.provider,
            instances.c.region,
            instances.c.instance_type,
            instances.c.gpu_model,
            instances.c.gpu_count,
            prices.c.billing,
            prices.c.price,
            prices.c.currency,
            prices.c.observed_at,
            instances.c.vcpus,
            instances.c.memory_gb,
            prices.c.source,
        )
        .join(instances, instances.c.id == prices.c.instance_id)
        .where(*filters)
        .order_by(prices.c.observed_on, instances.c.provider, instances.c.region, instances.c.instance_type)
    )
    return conn.execution_options(stream_results=True, yield_per=5000).execute(query)
