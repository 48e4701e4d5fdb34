"""The hot reads, done in SQL on indexes: the latest price per instance and billing mode, a window
of recent history for a handful of instances, and what the database holds at all.

Nothing here loads the whole history into Python: the latest-price query seeks each series' latest
day on the unique index (instance_id, billing, observed_on) and joins back, so it costs the same with
a week of history as with years; the history query is bounded by the instances asked for and a date
window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Select, Subquery, Table, and_, case, exists, func, select, true
from sqlalchemy.engine import Connection

from db import catalogue
from db.records import Stock, as_date, as_datetime, as_decimal
from db.schema import availability, instances, prices, scrape_runs
from vocab import EXPORT_COLUMNS, STORED_RUN_STATUSES, RunStatus, StockStatus


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
    median_price: Decimal | None = None  # a marketplace's median listing (AutoDL); `price` is the cheapest
    # ``observed_at`` is when this price was first seen; this, when it was last seen (None: only then).
    confirmed_at: dt.datetime | None = None
    # When the provider was last seen not listing this offer (db.catalogue); None while it is listed.
    unlisted_at: dt.datetime | None = None

    @property
    def last_confirmed_at(self) -> dt.datetime:
        """When the provider was last seen charging this price: what a price's age counts from."""
        return (
            self.confirmed_at
            if self.confirmed_at and self.confirmed_at > self.observed_at
            else self.observed_at
        )


def has_prices(conn: Connection) -> bool:
    return bool(conn.execute(select(exists().where(prices.c.id.is_not(None)))).scalar())


def has_gathered_prices(conn: Connection) -> bool:
    """Whether a refresh or an import has stored prices (the bundled snapshot's never count)."""
    gathered = exists().where(
        scrape_runs.c.kind.in_(("refresh", "import")),
        scrape_runs.c.status.in_(STORED_RUN_STATUSES),
        scrape_runs.c.prices_stored > 0,
    )
    return bool(conn.execute(select(gathered)).scalar())


def latest_prices(
    conn: Connection,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
    regions: Sequence[str] | None = None,
    billing: Sequence[str] | None = None,
) -> list[LatestPrice]:
    """The latest observation of every (instance, billing mode) matching the filters."""
    statement = _latest_statement(gpu_models, providers, regions, billing, lateral=uses_lateral(conn))
    rows = [LatestPrice(*row) for row in conn.execute(statement)]
    gone = catalogue.unlisted_at(
        conn, (catalogue.Listed(r.instance_id, r.provider, r.region, r.billing) for r in rows)
    )
    return [
        replace(r, unlisted_at=gone[(r.instance_id, r.billing)])
        if (r.instance_id, r.billing) in gone
        and (r.unlisted_at is None or r.unlisted_at < gone[(r.instance_id, r.billing)])
        else r
        for r in rows
    ]


def uses_lateral(conn: Connection) -> bool:
    """Whether ``latest_rows`` should fetch each series' row with a LATERAL join (PostgreSQL)."""
    return conn.dialect.name == "postgresql"


def _latest_statement(
    gpu_models: Sequence[str] | None,
    providers: Sequence[str] | None,
    regions: Sequence[str] | None,
    billing: Sequence[str] | None,
    lateral: bool = False,
) -> Select:
    inst_filter = []
    if gpu_models:
        inst_filter.append(instances.c.gpu_model.in_(list(gpu_models)))
    if providers:
        inst_filter.append(instances.c.provider.in_(list(providers)))
    if regions:
        inst_filter.append(instances.c.region.in_(list(regions)))
    latest = latest_rows(
        prices, "observed_on", select(instances.c.id).where(*inst_filter), billing=billing, lateral=lateral
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
            latest.c.billing,
            latest.c.price,
            latest.c.currency,
            latest.c.unit,
            latest.c.cny_per_gpu_hour,
            latest.c.tiers,
            latest.c.observed_at,
            latest.c.source,
            scrape_runs.c.kind,
            latest.c.median_price,
            latest.c.confirmed_at,
            latest.c.unlisted_at,
        )
        .select_from(latest)
        .join(instances, instances.c.id == latest.c.instance_id)
        .join(scrape_runs, scrape_runs.c.id == latest.c.run_id)
        .order_by(instances.c.provider, instances.c.region, instances.c.instance_type, latest.c.billing)
    )


def latest_rows(
    table: Table,
    last: str,
    instance_ids: Select,
    *,
    billing: Sequence[str] | None = None,
    below: object = None,
    name: str = "latest",
    lateral: bool = False,
) -> Subquery:
    """The row with the greatest ``last`` of each (instance, billing) series of ``table`` (``prices``:
    ``observed_on``; ``availability``: ``run_id``) among the wanted instances, the greatest below
    ``below`` if given: a subquery with every column of ``table``.

    A loose index scan on the table's unique index (instance_id, billing, ``last``): a recursive CTE
    steps from each instance's first billing mode to its next one, and each series' row is one more
    index seek. A few seeks per series, however long its history; grouping the index instead would
    read every row of the wanted instances, and the table grows by one row per series every night.

    On SQLite each series' greatest ``last`` is joined back to the table on the unique index. On
    PostgreSQL (``lateral``) each series fetches its row with ``ORDER BY last DESC LIMIT 1`` in a
    LATERAL subquery: the planner cannot guess how many series a recursive CTE yields and, guessing
    too many, would join back by scanning the whole table.
    """
    ids = instance_ids.subquery(f"{name}_wanted")
    t = table.alias(f"{name}_t")
    first_mode = select(func.min(t.c.billing)).where(t.c.instance_id == ids.c.id).scalar_subquery()
    series = select(ids.c.id.label("instance_id"), first_mode.label("billing")).cte(
        f"{name}_series", recursive=True
    )
    step = series.alias(f"{name}_step")
    next_mode = (
        select(func.min(t.c.billing))
        .where(t.c.instance_id == step.c.instance_id, t.c.billing > step.c.billing)
        .scalar_subquery()
    )
    series = series.union_all(select(step.c.instance_id, next_mode).where(step.c.billing.is_not(None)))
    wanted = [series.c.billing.is_not(None)]
    if billing:
        wanted.append(series.c.billing.in_(list(billing)))
    row = table.alias(f"{name}_row")
    bounds = [row.c.instance_id == series.c.instance_id, row.c.billing == series.c.billing]
    if below is not None:
        bounds.append(row.c[last] < below)
    if lateral:
        one = select(row).where(*bounds).order_by(row.c[last].desc()).limit(1).lateral(f"{name}_one")
        return select(one).select_from(series).join(one, true()).where(*wanted).subquery(name)
    tail = t.c[last]
    greatest = (
        select(func.max(tail))
        .where(t.c.instance_id == series.c.instance_id, t.c.billing == series.c.billing, *_below(tail, below))
        .scalar_subquery()
    )
    keys = (
        select(series.c.instance_id, series.c.billing, greatest.label("last"))
        .where(*wanted)
        .subquery(f"{name}_keys")
    )
    found = and_(
        row.c.instance_id == keys.c.instance_id, row.c.billing == keys.c.billing, row.c[last] == keys.c.last
    )
    return select(row).select_from(keys).join(row, found).subquery(name)


def _below(column: ColumnElement, bound: object) -> list[ColumnElement]:
    return [] if bound is None else [column < bound]


class Level(NamedTuple):
    """One stored price level of one offer: from the day it was first seen to the day it was last
    confirmed (the same day for a row stored before 0007, when every sighting was a row)."""

    instance_id: int
    billing: str
    first_day: dt.date
    last_day: dt.date
    price: Decimal
    cny_per_gpu_hour: Decimal
    median_price: Decimal | None


def price_levels(
    conn: Connection, instance_ids: Select, since: dt.date, billing: Sequence[str] | None = None
) -> list[Level]:
    """The levels of the wanted instances that reach into the days from ``since``: those first seen
    then or later (an index range), and each series' level from before ``since`` when its last
    confirmation reaches it (one index seek per series). A level ends the day before the next one of
    its series starts, however late it was confirmed."""
    rows = list(conn.execute(levels_from_statement(instance_ids, since, billing)))
    before = latest_rows(
        prices, "observed_on", instance_ids, billing=billing, below=since, name="before",
        lateral=uses_lateral(conn),
    )  # fmt: skip
    since_moment = dt.datetime.combine(since, dt.time())
    rows += [
        r
        for r in conn.execute(
            select(*(before.c[c] for c in _LEVEL_COLUMNS)).where(before.c.confirmed_at >= since_moment)
        )
    ]
    by_series: dict[tuple[int, str], list[Any]] = {}
    for r in rows:
        by_series.setdefault((r[0], r[1]), []).append(r)
    out: list[Level] = []
    for (iid, mode), found in by_series.items():
        found.sort(key=lambda r: as_date(r[2]))
        for i, (_, _, day, _seen, confirmed, price, cny, median) in enumerate(found):
            first = as_date(day)
            last = as_datetime(confirmed).date() if confirmed is not None else first
            if i + 1 < len(found):
                last = min(last, as_date(found[i + 1][2]) - dt.timedelta(days=1))
            out.append(Level(iid, mode, first, max(first, last), as_decimal(price), as_decimal(cny),
                             None if median is None else as_decimal(median)))  # fmt: skip
    return out


_LEVEL_COLUMNS = ("instance_id", "billing", "observed_on", "observed_at", "confirmed_at", "price",
                  "cny_per_gpu_hour", "median_price")  # fmt: skip


def levels_from_statement(instance_ids: Select, since: dt.date, billing: Sequence[str] | None) -> Select:
    """The levels of the wanted instances first seen on or after ``since`` (on ``ix_prices_observed_on``
    or the unique index, whichever the database prefers; never a scan of ``prices``)."""
    wanted = [prices.c.instance_id.in_(instance_ids), prices.c.observed_on >= since]
    if billing:
        wanted.append(prices.c.billing.in_(list(billing)))
    return select(*(prices.c[c] for c in _LEVEL_COLUMNS)).where(*wanted)


def daily_levels(levels: Iterable[Level], since: dt.date) -> Iterable[tuple[Level, dt.date]]:
    """Each level on each day it held, from ``since`` on."""
    one = dt.timedelta(days=1)
    for level in levels:
        day = max(level.first_day, since)
        while day <= level.last_day:
            yield level, day
            day += one


def recent_prices(
    conn: Connection, keys: Iterable[tuple[int, str]], since: dt.date
) -> dict[tuple[int, str], list[tuple[dt.date, Decimal]]]:
    """(day, unit price) on each day from ``since`` that a price was seen or held (first seen on or
    before the day and confirmed on or after it) for each (instance_id, billing), oldest first."""
    keys = set(keys)
    out: dict[tuple[int, str], list[tuple[dt.date, Decimal]]] = {k: [] for k in keys}
    iids = sorted({k[0] for k in keys})
    modes = sorted({k[1] for k in keys})  # e.g. no spot rows when no spot price is asked about
    for start in range(0, len(iids), 500):
        chunk = iids[start : start + 500]
        levels = price_levels(conn, select(instances.c.id).where(instances.c.id.in_(chunk)), since, modes)
        for level, day in daily_levels(levels, since):
            found = out.get((level.instance_id, level.billing))
            if found is not None:
                found.append((day, level.price))
    for series in out.values():
        series.sort(key=lambda p: p[0])
    return out


def price_ranges(
    conn: Connection, keys: Iterable[tuple[int, str]], since: dt.date
) -> dict[tuple[int, str], tuple[int, Decimal, Decimal]]:
    """(levels, min, max) of the unit price held on the days from ``since`` for each (instance_id,
    billing), aggregated in the database: the bounds a price basis can take, without the series. The
    levels first seen in the window are grouped in SQL; the one held when it opened is one seek per
    series."""
    keys = set(keys)
    out: dict[tuple[int, str], tuple[int, Decimal, Decimal]] = {}
    iids = sorted({k[0] for k in keys})
    modes = sorted({k[1] for k in keys})

    def fold(key: tuple[int, str], count: int, low: Decimal, high: Decimal) -> None:
        if key not in keys:
            return
        was = out.get(key)
        out[key] = (
            (count, low, high) if was is None else (was[0] + count, min(was[1], low), max(was[2], high))
        )

    since_moment = dt.datetime.combine(since, dt.time())
    for start in range(0, len(iids), 500):
        chunk = iids[start : start + 500]
        rows = conn.execute(
            select(
                prices.c.instance_id,
                prices.c.billing,
                func.count(),
                func.min(prices.c.price),
                func.max(prices.c.price),
            )
            .where(
                prices.c.instance_id.in_(chunk), prices.c.billing.in_(modes), prices.c.observed_on >= since
            )
            .group_by(prices.c.instance_id, prices.c.billing)
        )
        for iid, billing, count, low, high in rows:
            # The column's own Decimal (as recent_prices reads it), so bounds equal the series' min/max.
            fold((iid, billing), int(count), as_decimal(low), as_decimal(high))
        held = latest_rows(
            prices, "observed_on", select(instances.c.id).where(instances.c.id.in_(chunk)),
            billing=modes, below=since, name="held", lateral=uses_lateral(conn),
        )  # fmt: skip
        rows = conn.execute(
            select(held.c.instance_id, held.c.billing, held.c.price).where(
                held.c.confirmed_at >= since_moment
            )
        )
        for iid, billing, price in rows:
            fold((iid, billing), 1, as_decimal(price), as_decimal(price))
    return out


def latest_availability(conn: Connection, keys: Iterable[tuple[int, str]]) -> dict[tuple[int, str], Stock]:
    """The latest stock observation of each (instance_id, billing) that has one.

    Seeks the latest run of each key on ``uq_availability_instance_billing_run`` and joins back: one
    row per key, never the whole history.
    """
    keys = set(keys)
    out: dict[tuple[int, str], Stock] = {}
    iids = sorted({k[0] for k in keys})
    for start in range(0, len(iids), 500):
        chunk = iids[start : start + 500]
        latest = latest_rows(
            availability,
            "run_id",
            select(instances.c.id).where(instances.c.id.in_(chunk)),
            lateral=uses_lateral(conn),
        )
        rows = conn.execute(
            select(
                latest.c.instance_id,
                latest.c.billing,
                latest.c.stock_status,
                latest.c.idle_gpus,
                latest.c.total_gpus,
                latest.c.observed_at,
                latest.c.orderable_gpus,
                latest.c.max_idle_gpus_per_machine,
                latest.c.max_orderable_gpus_per_machine,
            )
        )
        for iid, billing, *said in rows:
            if (iid, billing) in keys:
                out[(iid, billing)] = Stock(*said)
    return out


def current_availability(conn: Connection, priced: Iterable[Any]) -> dict[tuple[int, str], Stock]:
    """``latest_availability`` for priced rows (anything with ``instance_id``, ``billing`` and
    ``observed_at``: a latest price, a quote option, a rental), leaving out stock stated before the
    price's own day. A provider that stops stating stock, or a scraper that stops claiming it (the
    Volcengine calculator's zone list), must not keep an old claim alive beside today's price."""
    priced = list(priced)
    found = latest_availability(conn, [(p.instance_id, p.billing) for p in priced]) if priced else {}
    out = {}
    for p in priced:
        key = (p.instance_id, p.billing)
        stock = found.get(key)
        seen = getattr(p, "last_confirmed_at", p.observed_at)  # a stored level: its last confirmation
        if stock is not None and stock.observed_at.date() >= seen.date():
            out[key] = stock
    return out


@dataclass(frozen=True)
class HistoryRow:
    """One day of one GPU model at one provider and billing mode: the spread of CNY per GPU-hour over
    the instances observed that day, and (where stated) the stock of the last run of the day."""

    day: dt.date
    provider: str
    gpu_model: str
    billing: str
    instances: int
    min_cny_per_gpu_hour: Decimal
    max_cny_per_gpu_hour: Decimal
    median_cny_per_gpu_hour: Decimal | None = None  # marketplace median listing, when there is one
    stock_known: int = 0
    sold_out: int = 0
    idle_gpus: int | None = None
    total_gpus: int | None = None
    # A marketplace's most idle GPUs on any one machine, over the instances of the day (None: not stated).
    max_idle_gpus_per_machine: int | None = None
    # Against the series' previous day: the change of the cheapest price over the instances priced on
    # both days (a price change, not a change of mix; None on a series' first day or with none in
    # common), and whether the set of instances changed.
    change_percent: Decimal | None = None
    set_changed: bool = False


def price_history(
    conn: Connection,
    gpu_models: Sequence[str],
    since: dt.date,
    providers: Sequence[str] | None = None,
    billing: Sequence[str] | None = None,
    in_scope: Callable[[str, str], bool] | None = None,
) -> list[HistoryRow]:
    """Day by day since ``since``: per provider, GPU model and billing mode, the instances priced that
    day (a price level holds from its first sighting to its last confirmation) and their stock.

    Reads the instances of ``gpu_models`` through ``ix_instances_gpu_model``, their price levels in the
    window (``price_levels``) and their stock through ``ix_availability_instance_day``. With
    ``in_scope`` (provider, region: whether the region counts; the caller's region scope) only the
    regions it keeps are counted.
    """
    wanted = wanted_instances(gpu_models, providers)
    about = {
        iid: (provider, model, region)
        for iid, provider, model, region in conn.execute(
            select(instances.c.id, instances.c.provider, instances.c.gpu_model, instances.c.region).where(
                instances.c.id.in_(wanted)
            )
        )
    }
    days: dict[tuple[dt.date, str, str, str], dict[int, tuple[Decimal, Decimal | None]]] = {}
    for level, day in daily_levels(price_levels(conn, wanted, since, billing), since):
        provider, model, region = about[level.instance_id]
        if in_scope is not None and not in_scope(provider, region):
            continue
        median = None
        if level.median_price is not None and level.price:
            median = level.median_price * level.cny_per_gpu_hour / level.price
        days.setdefault((day, provider, model, level.billing), {})[level.instance_id] = (
            level.cny_per_gpu_hour,
            median,
        )
    stock = _stock_history(conn, wanted, since, billing, in_scope is not None)
    if in_scope is not None:
        stock = _kept_stock(stock, in_scope)
    out = []
    previous: dict[tuple[str, str, str], dict[int, tuple[Decimal, Decimal | None]]] = {}
    for key in sorted(days, key=lambda k: (k[2], k[1], k[3], k[0])):
        day, provider, model, mode = key
        priced = days[key]
        cheapest = [p for p, _ in priced.values()]
        medians = [m for _, m in priced.values() if m is not None]
        before = previous.get((provider, model, mode))
        change, set_changed = None, False
        if before is not None:
            set_changed = set(before) != set(priced)
            common = set(before) & set(priced)
            if common:
                was = min(before[i][0] for i in common)
                now = min(priced[i][0] for i in common)
                change = (now - was) / was * Decimal(100) if was else None
        previous[(provider, model, mode)] = priced
        known, sold_out, idle, total, most = stock.get(key, (0, 0, None, None, None))
        out.append(
            HistoryRow(
                day=day,
                provider=provider,
                gpu_model=model,
                billing=mode,
                instances=len(priced),
                min_cny_per_gpu_hour=_decimal(min(cheapest)),
                max_cny_per_gpu_hour=_decimal(max(cheapest)),
                median_cny_per_gpu_hour=_decimal(min(medians)) if medians else None,
                stock_known=known,
                sold_out=sold_out,
                idle_gpus=idle,
                total_gpus=total,
                max_idle_gpus_per_machine=most,
                change_percent=None if change is None else change.quantize(Decimal("0.01")),
                set_changed=set_changed,
            )
        )
    out.sort(key=lambda r: (r.gpu_model, r.provider, r.billing, r.day))
    return out


def newest_price_day(
    conn: Connection,
    gpu_models: Sequence[str],
    providers: Sequence[str] | None = None,
    billing: Sequence[str] | None = None,
) -> dt.date | None:
    """The newest observation day among the prices ``price_history`` would read (None: no price)."""
    price_filter = [prices.c.instance_id.in_(wanted_instances(gpu_models, providers))]
    if billing:
        price_filter.append(prices.c.billing.in_(list(billing)))
    newest = func.max(func.coalesce(prices.c.confirmed_at, prices.c.observed_at))
    moment = conn.execute(select(newest).where(*price_filter)).scalar()
    return None if moment is None else as_datetime(moment).date()


def wanted_instances(gpu_models: Sequence[str] | None, providers: Sequence[str] | None) -> Select:
    """The ids of the instances of ``gpu_models`` at ``providers`` (either empty or None: all), through
    ``ix_instances_gpu_model``: the history's, the report's and the export's one instance filter."""
    conditions = []
    if gpu_models:
        conditions.append(instances.c.gpu_model.in_(list(gpu_models)))
    if providers:
        conditions.append(instances.c.provider.in_(list(providers)))
    return select(instances.c.id).where(*conditions)


def _kept_stock(
    stock: dict[tuple, tuple[int, int, int | None, int | None, int | None]], keep: Callable
) -> dict[tuple, tuple[int, int, int | None, int | None, int | None]]:
    """Per-region stock rows (the region last) merged into one per day and series, over the regions
    ``keep(provider, region)`` keeps: counts add up, the most idle on one machine is the most."""
    stated: dict[tuple, tuple[int, int, int | None, int | None, int | None]] = {}
    for (*key, region), (known, out, idle, total, most) in stock.items():
        if not keep(key[1], region):
            continue
        was = stated.get(tuple(key), (0, 0, None, None, None))
        stated[tuple(key)] = (
            was[0] + known,
            was[1] + out,
            _add(was[2], idle),
            _add(was[3], total),
            most if was[4] is None else was[4] if most is None else max(was[4], most),
        )
    return stated


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def _stock_history(
    conn: Connection,
    wanted: Select,
    since: dt.date,
    billing: Sequence[str] | None,
    by_region: bool = False,
) -> dict[tuple, tuple[int, int, int | None, int | None, int | None]]:
    """Per (day, provider, GPU model, billing), and region too ``by_region``: instances with a stated
    stock, how many sold out, the idle/total GPUs and the most idle on any one machine (a
    marketplace's), each instance counted at its last run of the day."""
    region = [instances.c.region] if by_region else []
    last_filter = [availability.c.instance_id.in_(wanted), availability.c.observed_on >= since]
    if billing:
        last_filter.append(availability.c.billing.in_(list(billing)))
    last = (
        select(
            availability.c.instance_id,
            availability.c.billing,
            availability.c.observed_on,
            func.max(availability.c.run_id).label("run_id"),
        )
        .where(*last_filter)
        .group_by(availability.c.instance_id, availability.c.billing, availability.c.observed_on)
        .subquery("last")
    )
    sold_out = func.sum(case((availability.c.stock_status == StockStatus.SOLD_OUT, 1), else_=0))
    rows = conn.execute(
        select(
            availability.c.observed_on,
            instances.c.provider,
            instances.c.gpu_model,
            availability.c.billing,
            func.count(availability.c.stock_status),
            sold_out,
            func.sum(availability.c.idle_gpus),
            func.sum(availability.c.total_gpus),
            func.max(availability.c.max_idle_gpus_per_machine),
            *region,
        )
        .select_from(last)
        .join(
            availability,
            and_(
                availability.c.instance_id == last.c.instance_id,
                availability.c.billing == last.c.billing,
                availability.c.run_id == last.c.run_id,
            ),
        )
        .join(instances, instances.c.id == availability.c.instance_id)
        .group_by(
            availability.c.observed_on,
            instances.c.provider,
            instances.c.gpu_model,
            availability.c.billing,
            *region,
        )
    )
    return {
        (day, provider, model, mode, *where): (
            int(known or 0),
            int(out or 0),
            None if idle is None else int(idle),
            None if total is None else int(total),
            None if most is None else int(most),
        )
        for day, provider, model, mode, known, out, idle, total, most, *where in rows
    }


def _decimal(value: object) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.000001"))


@dataclass(frozen=True)
class RunRow:
    id: int
    provider: str
    kind: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    status: str
    offers_seen: int
    prices_stored: int
    prices_changed: int
    unknown_gpus: str | None
    error: str | None
    source: str | None
    mode: str | None
    offers_skipped: int | None
    prices_flagged: int | None
    notes: str | None


def recent_runs(conn: Connection, limit: int = 20, providers: Sequence[str] | None = None) -> list[RunRow]:
    """The latest ``limit`` runs (newest first), optionally of some providers only."""
    query = select(
        scrape_runs.c.id,
        scrape_runs.c.provider,
        scrape_runs.c.kind,
        scrape_runs.c.started_at,
        scrape_runs.c.finished_at,
        scrape_runs.c.status,
        scrape_runs.c.offers_seen,
        scrape_runs.c.prices_stored,
        scrape_runs.c.prices_changed,
        scrape_runs.c.unknown_gpus,
        scrape_runs.c.error,
        scrape_runs.c.source,
        scrape_runs.c.mode,
        scrape_runs.c.offers_skipped,
        scrape_runs.c.prices_flagged,
        scrape_runs.c.notes,
    )
    if providers:
        query = query.where(scrape_runs.c.provider.in_(list(providers)))
    return [
        RunRow(**row._mapping) for row in conn.execute(query.order_by(scrape_runs.c.id.desc()).limit(limit))
    ]


@dataclass(frozen=True)
class ProviderHealth:
    """A provider's last refresh (and its error), its last successful one, and the failures since."""

    provider: str
    last_status: str
    last_started_at: dt.datetime
    last_error: str | None
    last_ok_at: dt.datetime | None
    failures_since_ok: int


def provider_health(conn: Connection, providers: Sequence[str]) -> dict[str, ProviderHealth]:
    """Per provider (refresh runs only), a few indexed lookups each (runs are few; ids order them)."""
    out: dict[str, ProviderHealth] = {}
    for provider in providers:
        refresh = and_(scrape_runs.c.provider == provider, scrape_runs.c.kind == "refresh")
        last = conn.execute(
            select(scrape_runs.c.status, scrape_runs.c.started_at, scrape_runs.c.error)
            .where(refresh)
            .order_by(scrape_runs.c.id.desc())
            .limit(1)
        ).first()
        if last is None:
            continue
        last_ok = conn.execute(
            select(scrape_runs.c.id, scrape_runs.c.started_at)
            .where(refresh, scrape_runs.c.status.in_(STORED_RUN_STATUSES))
            .order_by(scrape_runs.c.id.desc())
            .limit(1)
        ).first()
        failures = select(func.count()).where(refresh, scrape_runs.c.status == RunStatus.FAILED)
        if last_ok is not None:
            failures = failures.where(scrape_runs.c.id > last_ok[0])
        out[provider] = ProviderHealth(
            provider,
            last[0],
            last[1],
            last[2],
            last_ok[1] if last_ok else None,
            int(conn.execute(failures).scalar() or 0),
        )
    return out


def snapshot_run(conn: Connection) -> tuple[dt.datetime, str | None] | None:
    """(loaded_at, source) of the bundled-snapshot load, if the database holds one."""
    row = conn.execute(
        select(scrape_runs.c.started_at, scrape_runs.c.source)
        .where(scrape_runs.c.kind == "snapshot", scrape_runs.c.status == RunStatus.OK)
        .order_by(scrape_runs.c.id.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row else None


def export_rows(
    conn: Connection, gpu_models: Sequence[str] | None = None, providers: Sequence[str] | None = None
):
    """Every stored observation (oldest first), streamed, with its instance's columns, its tiers and
    median, and the stock seen in the same run: the columns of ``vocab.EXPORT_COLUMNS``, each read from
    the first of the instance, the price and the run's stock that has it."""
    filters = []
    if gpu_models:
        filters.append(instances.c.gpu_model.in_(list(gpu_models)))
    if providers:
        filters.append(instances.c.provider.in_(list(providers)))
    stock = availability.alias("stock")
    snapshot = (scrape_runs.c.kind == "snapshot").label("from_snapshot")
    query = (
        select(
            *(
                snapshot
                if name == "from_snapshot"
                else next(t.c[name] for t in (instances, prices, stock) if name in t.c)
                for name in EXPORT_COLUMNS
            )
        )
        .join(instances, instances.c.id == prices.c.instance_id)
        .join(scrape_runs, scrape_runs.c.id == prices.c.run_id)
        .outerjoin(
            stock,
            (stock.c.instance_id == prices.c.instance_id)
            & (stock.c.billing == prices.c.billing)
            & (stock.c.run_id == prices.c.run_id),
        )
        .where(*filters)
        .order_by(prices.c.observed_on, instances.c.provider, instances.c.region, instances.c.instance_type)
    )
    return conn.execution_options(stream_results=True, yield_per=5000).execute(query)
