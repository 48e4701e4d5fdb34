"""The offers an alert rule is judged on: ``current_offers`` is the one door from alerts to prices.

The offers are the pricing core's (``planner.pricing.latest_offers``: the one filter, the latest price
and the current stock of every instance and billing mode the rule covers, priced per GPU-hour at
today's [fx] rates), judged by its one stock rule (``Offer.availability``). An ``AlertOffer`` adds only
what the rule's condition needs from history: the stock of the run before (``back_in_stock``), the
median of the last days (``drop_percent``), whether the instance is new at its provider
(``new_offers``). Prices from the bundled snapshot are no news and never judged.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from db.queries import recent_prices
from db.schema import availability, instances, prices, scrape_runs
from planner.alerts.rules import Rule
from planner.pricing import Availability, Offer, OfferQuery, Stock, latest_offers
from planner.pricing import availability as stock_state
from vocab import STORED_RUN_STATUSES

SOLD_OUT = Availability.SOLD_OUT.value


@dataclass(frozen=True)
class AlertOffer:
    """One offer (``planner.pricing.Offer``) as an alert sees it now, with the history its rule needs."""

    offer: Offer
    previous_stock_status: str | None = None  # at the run before: "sold_out" when it could not be rented
    median_cny_per_gpu_hour: Decimal | None = None  # over the window before today (drop_percent only)
    is_new: bool = False  # first seen at the provider's latest refresh (new_offers only)

    @property
    def provider(self) -> str:
        return self.offer.provider

    @property
    def gpu_model(self) -> str:
        return self.offer.gpu_model

    @property
    def instance_type(self) -> str:
        return self.offer.instance_type

    @property
    def cny_per_gpu_hour(self) -> Decimal:
        return self.offer.cny_per_gpu_hour

    @property
    def key(self) -> str:
        o = self.offer
        return f"{o.provider}/{o.region}/{o.instance_type}/{o.billing}"

    @property
    def stock(self) -> Stock | None:
        return self.offer.stock

    def per_machine_text(self) -> str:
        """``, at most 2 on one machine`` where a marketplace states it (its idle GPUs are summed over
        machines), else empty."""
        stock = self.offer.stock
        if stock is None:
            return ""
        most = stock.max_orderable_gpus_per_machine
        if most is None:
            most = stock.max_idle_gpus_per_machine
        return "" if most is None else f", at most {most} on one machine"

    def stock_text(self) -> str:
        """``12/80 idle``, ``12/80 idle, at most 3 on one machine``, ``sold out``, ``available`` or ``-``."""
        stock = self.offer.stock
        if stock is None:
            return "-"
        if stock.idle_gpus is not None and stock.total_gpus:
            return f"{stock.idle_gpus}/{stock.total_gpus} idle{self.per_machine_text()}"
        if self.offer.availability is Availability.SOLD_OUT:
            return "sold out"
        return stock.stock_status or "-"

    def to_dict(self) -> dict[str, Any]:
        o, stock = self.offer, self.offer.stock
        return {
            "provider": o.provider,
            "region": o.region,
            "instance_type": o.instance_type,
            "gpu_model": o.gpu_model,
            "gpu_count": o.gpus_per_instance,
            "billing": o.billing,
            "cny_per_gpu_hour": o.cny_per_gpu_hour,
            "observed_at": o.observed_at,
            "stock_status": stock.stock_status if stock else None,
            "idle_gpus": stock.idle_gpus if stock else None,
            "total_gpus": stock.total_gpus if stock else None,
            "rentable_gpus": stock.rentable_gpus if stock else None,
            "max_idle_gpus_per_machine": stock.max_idle_gpus_per_machine if stock else None,
            "max_orderable_gpus_per_machine": stock.max_orderable_gpus_per_machine if stock else None,
            "stock_state": o.availability.value,
            "previous_stock_status": self.previous_stock_status,
            "median_cny_per_gpu_hour": self.median_cny_per_gpu_hour,
            "is_new": self.is_new,
            "key": self.key,
            "stock": self.stock_text(),
        }


def current_offers(conn: Connection, rule: Rule, fx: Mapping[str, object]) -> list[AlertOffer]:
    """Every offer ``rule`` covers, priced now, with the history its condition needs (the pricing
    core's filter: spot only for a rule on billing = "spot"; vGPU slices are offers too)."""
    query = OfferQuery(
        gpu_models=tuple(rule.gpu_models),
        providers=(rule.provider,) if rule.provider else (),
        regions=(rule.region,) if rule.region else (),
        billing=(rule.billing,) if rule.billing else (),
        vgpu=True,
    )
    offers = [o for o in latest_offers(conn, query, fx) if not o.from_snapshot]  # the snapshot is no news
    medians = _window_medians(conn, offers, rule.window_days) if rule.condition == "drop_percent" else {}
    before = _previous_stock(conn, offers) if rule.condition == "back_in_stock" else {}
    new = _new_instances(conn, offers) if rule.condition == "new_offers" else set()
    return [
        AlertOffer(
            offer=o,
            previous_stock_status=before.get(o.key),
            median_cny_per_gpu_hour=medians.get(o.key),
            is_new=o.instance_id in new,
        )
        for o in offers
    ]


def _window_medians(conn: Connection, offers: Sequence[Offer], days: int) -> dict[tuple[int, str], Decimal]:
    """Per offer, the median CNY per GPU-hour of the ``days`` days before its latest day (today's
    price is what is judged against it, so it is left out)."""
    if not offers:
        return {}
    since = min(o.observed_at.date() for o in offers) - dt.timedelta(days=days)
    series = recent_prices(conn, [o.key for o in offers], since)
    out = {}
    for o in offers:
        latest_day = o.observed_at.date()
        window = [
            price
            for day, price in series.get(o.key, [])
            if latest_day - dt.timedelta(days=days) <= day < latest_day
        ]
        if window:
            out[o.key] = o.at_price(Decimal(statistics.median(window))).cny_per_gpu_hour
    return out


def _previous_stock(conn: Connection, offers: Sequence[Offer]) -> dict[tuple[int, str], str | None]:
    """Per offer with a current stock observation, the stock status stated by the run before it:
    "sold_out" when the pricing core's rule says one instance could not be rented then."""
    out: dict[tuple[int, str], str | None] = {}
    for o in offers:
        if o.stock is None:
            continue
        found = conn.execute(
            select(
                availability.c.stock_status,
                availability.c.idle_gpus,
                availability.c.total_gpus,
                availability.c.observed_at,
                availability.c.orderable_gpus,
            )
            .where(
                availability.c.instance_id == o.instance_id,
                availability.c.billing == o.billing,
                availability.c.observed_at < o.stock.observed_at,
            )
            .order_by(availability.c.run_id.desc())
            .limit(1)
        ).first()
        if found is not None:
            then = Stock(*found)
            rentable = stock_state(then, o.gpus_per_instance).rentable
            out[o.key] = then.stock_status if rentable else SOLD_OUT
    return out


def _new_instances(conn: Connection, rows: Sequence[Offer]) -> set[int]:
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
