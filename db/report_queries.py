"""The report's reads (``reports.data`` shapes them into DataFrames), each one SQL query on the indexes.

Nothing loads the price history into Python: price changes compare the newest day's observations with
the latest observation in a bounded window before it, joined in SQL on ``ix_prices_observed_on`` and
the (instance, billing, day) unique index; refresh health reads the newest run per provider; the
chart's daily minimum per GPU model is grouped in SQL over a bounded window of
``ix_prices_observed_on``; stock is each series' newest availability row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, RowMapping, Select, and_, func, select
from sqlalchemy.engine import Connection

from db.queries import latest_rows, uses_lateral, wanted_instances
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
    """The newest observation day among the instances in scope (None for an empty database)."""
    query = select(func.max(prices.c.observed_on))
    if gpu_models or providers:
        query = query.where(prices.c.instance_id.in_(wanted_instances(gpu_models, providers)))
    return conn.execute(query).scalar()


def trend_statement(
    until: dt.date,
    days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> Select:
    """The cheapest on-demand CNY per GPU-hour of each GPU model, provider and region per day, over the
    ``days`` days that end on ``until``, with how many prices it was chosen from. Bounded by day, so only the window is read
    (on ix_prices_observed_on; for a filtered report on the (instance, billing, day) unique index)."""
    conditions = [
        prices.c.observed_on > until - dt.timedelta(days=days),
        prices.c.observed_on <= until,
        prices.c.billing == TREND_BILLING,
    ]
    if gpu_models or providers:
        conditions.append(prices.c.instance_id.in_(wanted_instances(gpu_models, providers)))
    return (
        select(
            prices.c.observed_on.label("day"),
            instances.c.gpu_model,
            func.min(prices.c.cny_per_gpu_hour).label("cny_per_gpu_hour"),
            func.count().label("offers"),
            instances.c.provider,
            instances.c.region,
        )
        .join(instances, instances.c.id == prices.c.instance_id)
        .where(*conditions)
        .group_by(prices.c.observed_on, instances.c.gpu_model, instances.c.provider, instances.c.region)
    )


def trend_rows(
    conn: Connection,
    until: dt.date,
    days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> Sequence[Row[Any]]:
    """``trend_statement``'s rows: (day, gpu_model, cny_per_gpu_hour, offers, provider, region)."""
    return conn.execute(trend_statement(until, days, gpu_models, providers)).all()


def changes_statement(
    day: dt.date,
    period_days: int,
    slack_days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> Select:
    """Prices observed on ``day`` that differ from the latest observation ``period_days`` to
    ``period_days + slack_days`` before it. Both sides are picked by day on ix_prices_observed_on."""
    new = prices.alias("new")
    old = prices.alias("old")
    reference = day - dt.timedelta(days=period_days)
    earlier = (
        select(prices.c.instance_id, prices.c.billing, func.max(prices.c.observed_on).label("day"))
        .where(
            prices.c.observed_on <= reference,
            prices.c.observed_on >= reference - dt.timedelta(days=slack_days),
        )
        .group_by(prices.c.instance_id, prices.c.billing)
        .subquery("earlier")
    )
    percent = (new.c.price - old.c.price) * 100 / func.nullif(old.c.price, 0)
    conditions = [new.c.observed_on == day, new.c.price != old.c.price]
    if gpu_models or providers:
        conditions.append(new.c.instance_id.in_(wanted_instances(gpu_models, providers)))
    return (
        select(
            instances.c.gpu_model,
            instances.c.provider,
            instances.c.region,
            instances.c.instance_type,
            new.c.billing,
            old.c.observed_on.label("old_on"),
            new.c.observed_on.label("new_on"),
            old.c.price.label("old_price"),
            new.c.price.label("new_price"),
            new.c.currency,
            new.c.unit,
            percent.label("change_pct"),
            old.c.cny_per_gpu_hour.label("old_cny_per_gpu_hour"),
            new.c.cny_per_gpu_hour.label("new_cny_per_gpu_hour"),
        )
        .select_from(new)
        .join(earlier, and_(earlier.c.instance_id == new.c.instance_id, earlier.c.billing == new.c.billing))
        .join(
            old,
            and_(
                old.c.instance_id == new.c.instance_id,
                old.c.billing == new.c.billing,
                old.c.observed_on == earlier.c.day,
            ),
        )
        .join(instances, instances.c.id == new.c.instance_id)
        .where(*conditions)
    )


def change_rows(
    conn: Connection,
    day: dt.date,
    period_days: int,
    slack_days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> Sequence[RowMapping]:
    """``changes_statement``'s rows, by column name."""
    return (
        conn.execute(changes_statement(day, period_days, slack_days, gpu_models, providers)).mappings().all()
    )


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
