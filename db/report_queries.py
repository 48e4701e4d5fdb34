"""The report's reads (``reports.data`` shapes them into DataFrames), each one SQL query on the indexes.

A stored price is a level, held from its first sighting to its last confirmation (``db.schema``).
Nothing loads the whole price history into Python: price changes compare the level each series held on
the newest day with the one it held a period before (one index seek per series); refresh health reads
the newest run per provider; the chart's daily minimum per GPU model reads the window's levels
(``db.queries.price_levels``); stock is each series' newest availability row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import Row, RowMapping, Select, func, select
from sqlalchemy.engine import Connection

from db.queries import daily_levels, latest_rows, price_levels, uses_lateral, wanted_instances
from db.records import as_date, as_datetime, as_decimal
from db.schema import availability, instances, prices, scrape_runs
from vocab import BillingMode

# max_idle_gpus_per_machine: a marketplace's (AutoDL) idle GPUs are summed over machines; the most on one.
REPORT_STOCK_COLUMNS = ("stock_status", "idle_gpus", "total_gpus", "max_idle_gpus_per_machine")
# The chart compares the headline price: pay by the hour, no commitment.
TREND_BILLING = BillingMode.ON_DEMAND.value
# Run columns the health table shows after the counts: what the provider could see (public, account,
# replay), offers not stored, stored prices flagged as tenfold moves.
RUN_EXTRAS = ("mode", "offers_skipped", "prices_flagged")


def as_of(
    conn: Connection, gpu_models: Sequence[str] | None = None, providers: Sequence[str] | None = None
) -> dt.date | None:
    """The newest day a price was seen (first or confirmed) among the instances in scope (None for an
    empty database)."""
    query = select(func.max(func.coalesce(prices.c.confirmed_at, prices.c.observed_at)))
    if gpu_models or providers:
        query = query.where(prices.c.instance_id.in_(wanted_instances(gpu_models, providers)))
    moment = conn.execute(query).scalar()
    if moment is None:
        return None
    return as_datetime(moment).date()


def trend_rows(
    conn: Connection,
    until: dt.date,
    days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> list[tuple[dt.date, str, Decimal, int, str, str]]:
    """The cheapest on-demand CNY per GPU-hour of each GPU model, provider and region per day, over the
    ``days`` days that end on ``until``, with how many prices it was chosen from: (day, gpu_model,
    cny_per_gpu_hour, offers, provider, region). A price counts on every day it held (from its first
    sighting to its last confirmation); only the window's levels are read (``price_levels``)."""
    since = until - dt.timedelta(days=days - 1)
    about = _instances(conn, gpu_models, providers)
    best: dict[tuple[dt.date, str, str, str], tuple[Decimal, int]] = {}
    levels = price_levels(conn, wanted_instances(gpu_models, providers), since, [TREND_BILLING])
    for level, day in daily_levels(levels, since):
        if day > until:
            continue
        model, provider, region, _ = about[level.instance_id]
        key = (day, model, provider, region)
        was = best.get(key)
        price = level.cny_per_gpu_hour
        best[key] = (price if was is None else min(was[0], price), 1 if was is None else was[1] + 1)
    return [(d, m, p, n, provider, region) for (d, m, provider, region), (p, n) in best.items()]


def change_rows(
    conn: Connection,
    day: dt.date,
    period_days: int,
    slack_days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Prices held on ``day`` that differ from the price the same offer held ``period_days`` before it
    (a price seen then or confirmed up to ``slack_days`` earlier), by column name."""
    reference = day - dt.timedelta(days=period_days)
    # Only a series with a level first seen after the reference day can hold another price on ``day``
    # (an index range on observed_on): changes are few, series many.
    wanted = (
        select(prices.c.instance_id.label("id"))
        .where(
            prices.c.observed_on > reference,
            prices.c.observed_on <= day,
            prices.c.instance_id.in_(wanted_instances(gpu_models, providers)),
        )
        .distinct()
    )
    now = _held_on(conn, wanted, day, 0)
    then = _held_on(conn, wanted, reference, slack_days)
    about = _instances(conn, gpu_models, providers)
    out = []
    for key, new in now.items():
        old = then.get(key)
        if old is None or old.price == new.price or old.first_day == new.first_day:
            continue
        model, provider, region, itype = about[key[0]]
        out.append(
            {
                "gpu_model": model,
                "provider": provider,
                "region": region,
                "instance_type": itype,
                "billing": key[1],
                "old_on": min(old.last_day, reference),
                "new_on": new.first_day,
                "old_price": old.price,
                "new_price": new.price,
                "currency": new.currency,
                "unit": new.unit,
                "change_pct": (new.price - old.price) * 100 / old.price if old.price else None,
                "old_cny_per_gpu_hour": old.cny_per_gpu_hour,
                "new_cny_per_gpu_hour": new.cny_per_gpu_hour,
            }
        )
    return out


@dataclass(frozen=True)
class _Held:
    first_day: dt.date
    last_day: dt.date
    price: Decimal
    currency: str
    unit: str
    cny_per_gpu_hour: Decimal


def _held_on(conn: Connection, wanted: Select, day: dt.date, slack_days: int) -> dict[tuple[int, str], _Held]:
    """Per (instance, billing) series, the price level in effect on ``day``: its latest level first
    seen on or before ``day`` whose last confirmation is no more than ``slack_days`` before it (one
    index seek per series)."""
    latest = latest_rows(prices, "observed_on", wanted, below=day + dt.timedelta(days=1), name="held",
                         lateral=uses_lateral(conn))  # fmt: skip
    rows = conn.execute(
        select(
            latest.c.instance_id,
            latest.c.billing,
            latest.c.observed_on,
            latest.c.observed_at,
            latest.c.confirmed_at,
            latest.c.price,
            latest.c.currency,
            latest.c.unit,
            latest.c.cny_per_gpu_hour,
        )  # fmt: skip
    )
    out = {}
    for iid, billing, first, _seen, confirmed, price, currency, unit, cny in rows:
        first = as_date(first)
        last = first if confirmed is None else max(first, as_datetime(confirmed).date())
        if last < day - dt.timedelta(days=slack_days):
            continue
        out[(int(iid), str(billing))] = _Held(first, last, as_decimal(price), currency, unit, as_decimal(cny))
    return out


def _instances(
    conn: Connection, gpu_models: Sequence[str] | None, providers: Sequence[str] | None
) -> dict[int, tuple[str, str, str, str]]:
    """(gpu_model, provider, region, instance_type) of each instance in scope."""
    rows = conn.execute(
        select(instances.c.id, instances.c.gpu_model, instances.c.provider, instances.c.region,
               instances.c.instance_type).where(instances.c.id.in_(wanted_instances(gpu_models, providers)))
    )  # fmt: skip
    return {int(i): (m, p, r, t) for i, m, p, r, t in rows}


def stock_rows(
    conn: Connection, gpu_models: Sequence[str] | None = None, providers: Sequence[str] | None = None
) -> Sequence[RowMapping]:
    """The newest availability row of every series of the instances in scope: provider, region,
    instance_type, billing, the ``REPORT_STOCK_COLUMNS`` and observed_at_utc."""
    newest = latest_rows(
        availability,
        "run_id",
        wanted_instances(gpu_models, providers),
        name="newest",
        lateral=uses_lateral(conn),
    )
    query = select(
        instances.c.provider,
        instances.c.region,
        instances.c.instance_type,
        newest.c.billing,
        *(newest.c[c] for c in REPORT_STOCK_COLUMNS),
        newest.c.observed_at.label("observed_at_utc"),
    ).join(instances, instances.c.id == newest.c.instance_id)
    return conn.execute(query).mappings().all()


def last_refreshes(conn: Connection) -> dict[str, Row[Any]]:
    """The newest refresh run of each provider that has one, by provider (with ``RUN_EXTRAS``)."""
    newest = (
        select(func.max(scrape_runs.c.id).label("id"))
        .where(scrape_runs.c.kind == "refresh")
        .group_by(scrape_runs.c.provider)
        .subquery("newest")
    )
    query = select(
        scrape_runs.c.provider,
        scrape_runs.c.status,
        scrape_runs.c.started_at,
        scrape_runs.c.finished_at,
        scrape_runs.c.offers_seen,
        scrape_runs.c.prices_stored,
        scrape_runs.c.prices_changed,
        scrape_runs.c.unknown_gpus,
        scrape_runs.c.error,
        *(scrape_runs.c[c] for c in RUN_EXTRAS),
    ).join(newest, newest.c.id == scrape_runs.c.id)
    return {row.provider: row for row in conn.execute(query)}
