"""The offers an alert rule is judged on: ``current_offers`` is the one door from alerts to prices.

It reads the latest price and the current stock of every instance and billing mode the rule covers
(``db.queries.latest_prices`` and ``current_availability``) and prices them per GPU-hour with the
pricing core (``planner.pricing.Offer.cny_per_gpu_hour``) at today's [fx] rates, adding only what the rule's condition needs
from history: the stock of the run before (``back_in_stock``), the median of the last days
(``drop_percent``), whether the instance is new at its provider (``new_offers``). When the pricing core
(``planner/pricing``) lands, this function is the one place to switch.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from db.queries import LatestPrice, current_availability, latest_prices, recent_prices
from db.schema import availability, instances, prices, scrape_runs
from planner.alerts.rules import Rule
from planner.pricing import offer_of
from vocab import STORED_RUN_STATUSES, StockStatus

SOLD_OUT = StockStatus.SOLD_OUT
AVAILABLE = StockStatus.AVAILABLE
LOW = StockStatus.LOW


@dataclass(frozen=True)
class AlertOffer:
    """One instance and billing mode as an alert sees it now."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: float
    billing: str
    cny_per_gpu_hour: Decimal
    observed_at: dt.datetime
    stock_status: str | None = None  # available | low | sold_out | None (not stated, or stated before today)
    idle_gpus: int | None = None
    total_gpus: int | None = None
    rentable_gpus: int | None = None  # idle GPUs that take an order now (AutoDL: gpu_order_num where stated)
    previous_stock_status: str | None = None  # at the run before (back_in_stock only)
    median_cny_per_gpu_hour: Decimal | None = None  # over the window before today (drop_percent only)
    is_new: bool = False  # first seen at the provider's latest refresh (new_offers only)

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.region}/{self.instance_type}/{self.billing}"

    @property
    def orderable(self) -> bool:
        """Stock says it can be rented now (idle GPUs, or an explicit "available")."""
        if self.stock_status == SOLD_OUT:
            return False
        return self.stock_status in (AVAILABLE, LOW) or bool(self.rentable_gpus)

    def stock_text(self) -> str:
        """``12/80 idle``, ``sold out``, ``available`` or ``-``."""
        if self.idle_gpus is not None and self.total_gpus:
            return f"{self.idle_gpus}/{self.total_gpus} idle"
        if self.stock_status == SOLD_OUT:
            return "sold out"
        return self.stock_status or "-"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key, "stock": self.stock_text()}


def current_offers(conn: Connection, rule: Rule, fx: Mapping[str, object]) -> list[AlertOffer]:
    """Every offer ``rule`` covers, priced now, with the history its condition needs."""
    rows = latest_prices(
        conn,
        gpu_models=list(rule.gpu_models) or None,
        providers=[rule.provider] if rule.provider else None,
        regions=[rule.region] if rule.region else None,
        billing=[rule.billing] if rule.billing else None,
    )
    rows = [r for r in rows if r.run_kind != "snapshot"]  # the bundled snapshot is no news
    stock = current_availability(conn, rows)
    medians = _window_medians(conn, rows, rule.window_days, fx) if rule.condition == "drop_percent" else {}
    before = _previous_stock(conn, rows, stock) if rule.condition == "back_in_stock" else {}
    new = _new_instances(conn, rows) if rule.condition == "new_offers" else set()
    out = []
    for r in rows:
        now = stock.get((r.instance_id, r.billing))
        out.append(
            AlertOffer(
                provider=r.provider,
                region=r.region,
                instance_type=r.instance_type,
                gpu_model=r.gpu_model,
                gpu_count=r.gpu_count,
                billing=r.billing,
                cny_per_gpu_hour=offer_of(r, fx).cny_per_gpu_hour,
                observed_at=r.observed_at,
                stock_status=now.stock_status if now else None,
                idle_gpus=now.idle_gpus if now else None,
                total_gpus=now.total_gpus if now else None,
                rentable_gpus=now.rentable_gpus if now else None,
                previous_stock_status=before.get((r.instance_id, r.billing)),
                median_cny_per_gpu_hour=medians.get((r.instance_id, r.billing)),
                is_new=r.instance_id in new,
            )
        )
    return out


def _window_medians(
    conn: Connection, rows: Sequence[LatestPrice], days: int, fx: Mapping[str, object]
) -> dict[tuple[int, str], Decimal]:
    """Per series, the median CNY per GPU-hour of the ``days`` days before its latest day (today's
    price is what is judged against it, so it is left out)."""
    if not rows:
        return {}
    since = min(r.observed_at.date() for r in rows) - dt.timedelta(days=days)
    series = recent_prices(conn, [(r.instance_id, r.billing) for r in rows], since)
    out = {}
    for r in rows:
        latest_day = r.observed_at.date()
        window = [
            price
            for day, price in series.get((r.instance_id, r.billing), [])
            if latest_day - dt.timedelta(days=days) <= day < latest_day
        ]
        if window:
            unit_median = Decimal(statistics.median(window))
            out[(r.instance_id, r.billing)] = offer_of(r, fx).at_price(unit_median).cny_per_gpu_hour
    return out


def _previous_stock(
    conn: Connection, rows: Sequence[LatestPrice], stock: Mapping[tuple[int, str], Any]
) -> dict[tuple[int, str], str | None]:
    """Per series with a current stock observation, the stock status stated by the run before it
    (idle 0 of a marketplace counts as sold out)."""
    out: dict[tuple[int, str], str | None] = {}
    for r in rows:
        now = stock.get((r.instance_id, r.billing))
        if now is None:
            continue
        found = conn.execute(
            select(availability.c.stock_status, availability.c.idle_gpus)
            .where(
                availability.c.instance_id == r.instance_id,
                availability.c.billing == r.billing,
                availability.c.observed_at < now.observed_at,
            )
            .order_by(availability.c.run_id.desc())
            .limit(1)
        ).first()
        if found is not None:
            status, idle = found
            out[(r.instance_id, r.billing)] = SOLD_OUT if status == SOLD_OUT or idle == 0 else status
    return out


def _new_instances(conn: Connection, rows: Sequence[LatestPrice]) -> set[int]:
    """Instances first priced by their provider's latest successful refresh, at a provider that had
    prices before it (a first refresh ever, or the first after loading the snapshot's providers, does
    not call its whole catalogue new)."""
    ids = sorted({r.instance_id for r in rows})
    providers = sorted({r.provider for r in rows})
    if not ids:
        return set()
    first_seen = dict(
        conn.execute(
            select(prices.c.instance_id, func.min(prices.c.observed_at))
            .where(prices.c.instance_id.in_(ids))
            .group_by(prices.c.instance_id)
        ).all()
    )
    provider_of = {r.instance_id: r.provider for r in rows}
    latest_run: dict[str, dt.datetime] = {}
    had_prices_before: dict[str, bool] = {}
    for provider in providers:
        started = conn.execute(
            select(func.max(scrape_runs.c.started_at)).where(
                scrape_runs.c.provider == provider,
                scrape_runs.c.kind == "refresh",
                scrape_runs.c.status.in_(STORED_RUN_STATUSES),
            )
        ).scalar()
        if started is None:
            continue
        latest_run[provider] = started
        earlier = conn.execute(
            select(func.count())
            .select_from(prices.join(instances, instances.c.id == prices.c.instance_id))
            .where(instances.c.provider == provider, prices.c.observed_at < started)
        ).scalar()
        had_prices_before[provider] = bool(earlier)
    return {
        iid
        for iid, seen in first_seen.items()
        if provider_of[iid] in latest_run
        and had_prices_before[provider_of[iid]]
        and seen >= latest_run[provider_of[iid]]
    }
