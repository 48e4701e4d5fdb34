"""The offers an alert rule is judged on: ``current_offers`` is the one door from alerts to prices.

The offers are the pricing core's (``planner.pricing.cost.latest_offers``: the one filter, the latest price
and the current stock of every instance and billing mode the rule covers, priced per GPU-hour at
today's [fx] rates), judged by its one stock rule (``Offer.availability``). An ``AlertOffer`` adds only
what the rule's condition needs from history: the stock stated by the provider's latest refresh run
and by the run before (``back_in_stock``), the median of the last days (``drop_percent``), whether
the latest run listed the offer and no run before ever stored it (``new_offers``), and the price the run
before saw (``drop_percent``: two refreshes on one day compare with each other). Events are judged by
run order (``db.run_offers``), never by the time a price carries: a replayed recording or an import
of old prices keeps its own time. Prices from the bundled snapshot are no news and never judged.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from db import run_offers
from db.queries import recent_prices
from db.schema import availability
from planner.alerts.rules import Rule
from planner.pricing.cost import Availability, Offer, OfferQuery, Stock, latest_offers
from planner.pricing.cost import availability as stock_state
from planner.pricing.words import stock_brief

SOLD_OUT = Availability.SOLD_OUT.value
# An alert's offer: these keys of ``Offer.to_dict`` (gpus_per_instance named gpu_count), and these of its
# stock record, flat.
_OFFER_KEYS = {
    "provider": "provider",
    "region": "region",
    "instance_type": "instance_type",
    "gpu_model": "gpu_model",
    "gpu_count": "gpus_per_instance",
    "billing": "billing",
    "cny_per_gpu_hour": "cny_per_gpu_hour",
    "observed_at": "observed_at",
}
_STOCK_KEYS = (
    "stock_status",
    "idle_gpus",
    "total_gpus",
    "rentable_gpus",
    "max_idle_gpus_per_machine",
    "max_orderable_gpus_per_machine",
)


@dataclass(frozen=True)
class AlertOffer:
    """One offer (``planner.pricing.cost.Offer``) as an alert sees it now, with the history its rule needs."""

    offer: Offer
    # At the provider's run just before its latest (``offer.stock`` is the latest's): "sold_out" when it
    # could not be rented then.
    previous_stock_status: str | None = None
    median_cny_per_gpu_hour: Decimal | None = None  # over the window before today (drop_percent only)
    # What the provider's run before its latest saw for this offer (drop_percent only; None: not listed
    # then, or a run made before run prices were kept).
    previous_cny_per_gpu_hour: Decimal | None = None
    is_new: bool = False  # listed by the provider's latest refresh and never stored before it (new_offers)

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

    def stock_text(self, lang: str = "en") -> str:
        """The offer's stock in an alert message (``planner.pricing.words.stock_brief``), in ``lang``."""
        return stock_brief(self.offer.stock, self.offer.availability, lang)

    def to_dict(self) -> dict[str, Any]:
        """The offer's record (``Offer.to_dict``) cut to what an alert shows, its stock record flattened
        in (with ``rentable_gpus``), then what the rule's condition read from history."""
        offer, stock = self.offer.to_dict(), self.offer.stock
        said = stock.to_dict() | {"rentable_gpus": stock.rentable_gpus} if stock else {}
        return {
            **{name: offer[key] for name, key in _OFFER_KEYS.items()},
            **{key: said.get(key) for key in _STOCK_KEYS},
            "stock_state": offer["stock_state"],
            "previous_stock_status": self.previous_stock_status,
            "median_cny_per_gpu_hour": self.median_cny_per_gpu_hour,
            "previous_cny_per_gpu_hour": self.previous_cny_per_gpu_hour,
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
    offers = [
        o
        for o in latest_offers(conn, query, fx)
        if not o.from_snapshot  # the snapshot is no news
        and o.unlisted_at is None  # nor is what its provider no longer lists
    ]
    drop = rule.condition == "drop_percent"
    medians = _window_medians(conn, offers, rule.window_days) if drop else {}
    previous = _previous_run_prices(conn, offers) if drop else {}
    changes = _stock_changes(conn, offers) if rule.condition == "back_in_stock" else {}
    new = _new_offers(conn, offers) if rule.condition == "new_offers" else set()
    out = []
    for o in offers:
        now, before = changes.get(o.key, (None, None))
        out.append(
            AlertOffer(
                # The stock as the latest run stated it, which a back-in-stock alert is about.
                offer=replace(o, stock=now) if now is not None else o,
                previous_stock_status=_status(before, o.gpus_per_instance),
                median_cny_per_gpu_hour=medians.get(o.key),
                previous_cny_per_gpu_hour=previous.get(o.key),
                is_new=o.key in new,
            )
        )
    return out


def _status(stock: Stock | None, gpus: float) -> str | None:
    """A stock's status, "sold_out" when by the pricing core's rule one instance could not be rented."""
    if stock is None:
        return None
    return stock.stock_status if stock_state(stock, gpus).rentable else SOLD_OUT


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


def _previous_run_prices(conn: Connection, offers: Sequence[Offer]) -> dict[tuple[int, str], Decimal]:
    """Per offer, the CNY per GPU-hour its provider's stored refresh run before the latest one saw:
    runs in the order they ran, so two refreshes on one day compare with each other."""
    out: dict[tuple[int, str], Decimal] = {}
    for provider, group in _by_provider(offers).items():
        runs = run_offers.compared_runs(conn, provider)
        if runs is None or runs.previous is None:
            continue
        seen = run_offers.listed_prices(conn, runs.previous)
        for o in group:
            price = seen.get(o.key)
            if price is not None:
                out[o.key] = Decimal(str(price))
    return out


def _stock_changes(conn: Connection, offers: Sequence[Offer]) -> dict[tuple[int, str], tuple[Stock, Stock]]:
    """Per offer whose stock both its provider's latest stored refresh run and the run just before it
    stated: (the latest's, the one before's). Runs in the order they ran, never the time their stock
    carries: a replayed recording keeps its recorded time."""
    out: dict[tuple[int, str], tuple[Stock, Stock]] = {}
    for provider, group in _by_provider(offers).items():
        runs = run_offers.compared_runs(conn, provider)
        if runs is None or runs.previous is None:
            continue
        keys = {o.key for o in group}
        now = _stock_at(conn, keys, runs.latest)
        before = _stock_at(conn, set(now), runs.previous)
        out.update({key: (now[key], before[key]) for key in now if key in before})
    return out


def _stock_at(conn: Connection, keys: set[tuple[int, str]], run_id: int) -> dict[tuple[int, str], Stock]:
    """The stock run ``run_id`` stated for each of ``keys`` that it stated (500 instances a query)."""
    out: dict[tuple[int, str], Stock] = {}
    iids = sorted({iid for iid, _billing in keys})
    for start in range(0, len(iids), 500):
        rows = select(availability).where(
            availability.c.run_id == run_id, availability.c.instance_id.in_(iids[start : start + 500])
        )
        for row in conn.execute(rows):
            key = (row.instance_id, row.billing)
            if key in keys:
                out[key] = Stock.of(row)
    return out


def _new_offers(conn: Connection, offers: Sequence[Offer]) -> set[tuple[int, str]]:
    """Offers never seen before at their provider: listed by its latest stored refresh run, not by the
    complete run before it, and stored by no other run ever (a price or a stock statement from an
    earlier refresh, an import or the snapshot): a listing that went away and came back is no news.
    Nothing is new at a provider's first refresh (its whole catalogue would be), nor where either
    run's list is unknown (runs made before the lists were kept)."""
    out: set[tuple[int, str]] = set()
    for provider, group in _by_provider(offers).items():
        runs = run_offers.compared_runs(conn, provider)
        if runs is None or runs.complete_before is None:
            continue
        now, then = run_offers.listed(conn, runs.latest), run_offers.listed(conn, runs.complete_before)
        if now is None or then is None:
            continue
        fresh = {o.key for o in group if o.key in now and o.key not in then}
        out |= fresh - run_offers.seen_before(conn, runs.latest, fresh)
    return out


def _by_provider(offers: Sequence[Offer]) -> dict[str, list[Offer]]:
    out: dict[str, list[Offer]] = {}
    for o in offers:
        out.setdefault(o.provider, []).append(o)
    return out
