"""The decision core: the one place money, hourly tiers, billing periods, filters and stock are judged.

Every command that answers "what does this cost, and can I rent it" (``quote``, ``plan``,
``gpus --value``, ``tco``'s rental side, alerts) goes through here, so they cannot disagree:

- ``OfferQuery``: the one filter (GPU models with their China variants, providers, regions, billing
  modes, region scope), built and checked once by ``OfferQuery.build``; spot only when its billing
  names spot, vGPU slices (fewer than one whole GPU) never unless asked for;
- ``Offer``: one instance's latest price on one billing mode, as every command sees it, with the
  provider's last word on stock; ``Offer.cny_per_gpu_hour`` is its list price per GPU-hour;
- ``Job`` and ``job_cost``: a job of N GPUs for H wall-clock hours over D calendar days on an offer:
  whole instances paid for (idle GPUs included), hourly modes pay the hours (Tencent's tiers, like tax
  brackets), subscriptions pay the whole periods that cover the days, foreign prices at the ``[fx]``
  rate, on the latest price or a 30-day basis (``planner.pricing.recent``);
- ``availability``: sold out, short of idle GPUs, idle but not orderable, available or unknown (most
  offers state no stock: they count as rentable).

Beside it, each in a module of its own: ``planner.pricing.offer`` (``Offer``, ``availability``; the stock
record it judges is ``db.records.Stock``), ``planner.pricing.query`` (``OfferQuery``, the region scope and
``models``, the catalog models a query covers),
``planner.pricing.tiers`` (hourly tiers and ``breakeven_hours``, the hours per month above which a monthly
subscription beats the tiered on-demand price), ``planner.pricing.links`` (``link_between``) and
``planner.pricing.rank`` (``rank``: rentable first; cheapest first on unrounded totals, but totals within
``TIE_SHARE`` or ``TIE_CNY`` of each other go to fewer machines, then to the wider NVLink; ``stocked_to_top``;
``cheaper_outside``, the cheaper option outside a region scope).

``db.queries`` is imported on use only: a bad argument is refused before SQLAlchemy loads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from db.records import Stock
from planner import catalog
from planner.billing import (
    BILLING_MODES,
    DAYS_PER_PERIOD,
    HOURLY_MODES,
    HOURS_PER_DAY,
    MONTHLY,
    ON_DEMAND,
    SPOT,
)
from planner.errors import ConfigError, QuantityError, UsageError
from planner.money import PriceRejected, fx_rate
from planner.pricing.headline import job_price, listed
from planner.pricing.links import link_between

# Defined in planner.pricing.offer, so that query and tiers can name Offer without importing this
# module; named here too, so that a caller takes the whole decision core (and Stock) from one module.
from planner.pricing.offer import Availability, Offer, availability  # noqa: F401
from planner.pricing.query import ALL, OfferQuery
from planner.pricing.recent import HISTORY_DAYS, LATEST, Recent, check_basis
from planner.pricing.tiers import TierUse, breakeven_hours, tier_uses, tiers_of
from planner.providers import MARKETPLACES
from planner.units import MAX_GPUS

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

    from db.queries import LatestPrice

MAX_HOURS = 24 * 365 * 10
CENTS = Decimal("0.01")


def offer_of(
    row: LatestPrice,
    fx: Mapping[str, object],
    china_variant: bool = False,
    stock: Stock | None = None,
    rate: Decimal | None = None,
) -> Offer:
    """The offer a stored latest price makes (at ``rate`` CNY per unit of its currency when the caller
    has it); a currency without an ``[fx]`` rate is a ConfigError."""
    return Offer(
        instance_id=row.instance_id,
        provider=row.provider,
        region=row.region,
        instance_type=row.instance_type,
        gpu_model=row.gpu_model,
        gpus_per_instance=row.gpu_count,
        billing=row.billing,
        unit_price=row.price,
        unit=row.unit,
        currency=row.currency,
        cny_per_currency=rate if rate is not None else cny_rate(row.currency, fx),
        observed_at=row.last_confirmed_at,
        first_seen_at=row.observed_at,
        unlisted_at=row.unlisted_at,
        source=row.source,
        from_snapshot=row.run_kind == "snapshot",
        gpu_note=row.gpu_note,
        china_variant=china_variant,
        tiers=tuple(tiers_of(row.tiers)) if row.tiers else (),
        median_unit_price=row.median_price,
        vcpus=row.vcpus,
        memory_gb=row.memory_gb,
        stock=stock,
    )


def cny_rate(currency: str, fx: Mapping[str, object]) -> Decimal:
    """CNY per unit of ``currency`` at the ``[fx]`` rate; a ConfigError naming the fix when it has none."""
    try:
        return fx_rate(currency, fx)
    except PriceRejected as err:
        raise ConfigError(str(err), "add the rate to [fx] in your config file") from None


def latest_offers(
    conn: Connection, query: OfferQuery, fx: Mapping[str, object], *, stock: bool = True
) -> list[Offer]:
    """Every offer ``query`` admits at its latest price (one indexed query), with the provider's
    latest stock on or after the price's day unless ``stock`` is False (then see ``with_stock``)."""
    from db import queries

    rows = queries.latest_prices(
        conn,
        gpu_models=list(query.gpu_models) or None,
        providers=list(query.providers) or None,
        regions=list(query.regions) or None,
        billing=list(query.billing) or None,
    )
    rates = {c: cny_rate(c, fx) for c in {r.currency for r in rows}}  # one check per currency
    said = hardware_stock(queries.current_availability(conn, rows)) if stock else {}
    offers = (
        offer_of(
            r, fx, r.gpu_model in query.variants, said.get((r.instance_id, r.billing)), rates[r.currency]
        )
        for r in rows
    )
    return [o for o in offers if query.admits(o)]


_NON_SPOT = tuple(m for m in BILLING_MODES if m != SPOT)


def hardware_stock(said: Mapping[tuple[int, str], Stock]) -> dict[tuple[int, str], Stock]:
    """Stock is the hardware's: an instance sold out on one non-spot billing mode is sold out on its
    other non-spot modes too (the same machines are rented by the hour or by the month), unless the
    provider stated stock for that mode itself. Spot capacity is a pool of its own."""
    out = dict(said)
    sold_out: dict[int, Stock] = {}
    for (iid, billing), stock in said.items():
        if billing != SPOT and not availability(stock, 1).rentable:
            sold_out.setdefault(iid, stock)
    return out | {
        (iid, billing): stock
        for iid, stock in sold_out.items()
        for billing in _NON_SPOT
        if (iid, billing) not in said
    }


def offers_in_and_out_of_scope(
    conn: Connection, query: OfferQuery, fx: Mapping[str, object], *, stock: bool = True
) -> tuple[list[Offer], list[Offer]]:
    """(the offers ``query`` admits, those it would admit but for its region scope), in one query: the
    second list is where a cheaper option outside the scope is looked for (empty for scope "all")."""
    offers = latest_offers(conn, replace(query, scope=ALL), fx, stock=stock)
    inside = [o for o in offers if query.in_scope(o)]
    return inside, [o for o in offers if not query.in_scope(o)]


def with_stock(conn: Connection, offers: Sequence[Offer]) -> list[Offer]:
    """The offers with what their provider said about stock on or after the price's day (bounded
    queries on the stock index, 500 instances each)."""
    if not offers:
        return []
    from db import queries

    found = hardware_stock(queries.current_availability(conn, offers))
    return [replace(o, stock=found[o.key]) if o.key in found else o for o in offers]


STOCK_CANDIDATES = 5  # per GPU model, the cheapest offers whose stock ``cheapest_by_model`` reads


def per_gpu_hour_key(offer: Offer) -> tuple:
    return (offer.cny_per_gpu_hour, offer.provider, offer.region, offer.instance_type, offer.billing)


def cheapest_by_model(
    conn: Connection, offers: Iterable[Offer], candidates: int = STOCK_CANDIDATES
) -> dict[str, Offer]:
    """Per GPU model, the offer with the lowest list price per GPU-hour that can be rented now; the
    cheapest when none can, but never one its provider no longer lists (``planner.pricing.headline``).
    Stock is read ``candidates`` offers of each model at a time, in one query a round, and further only
    for the models whose offers read so far cannot be rented. The rule ``gpus --value``, the report's
    cheapest table, its chart and the digest share."""
    pending: dict[str, list[Offer]] = {}
    for offer in listed(offers):
        pending.setdefault(offer.gpu_model, []).append(offer)
    pending = {model: sorted(found, key=per_gpu_hour_key) for model, found in pending.items()}
    first: dict[str, Offer] = {}
    rentable: dict[str, Offer] = {}
    start = 0
    while pending:
        chosen = [o for found in pending.values() for o in found[start : start + candidates]]
        for offer in with_stock(conn, chosen):  # in the order given: cheapest first per model
            first.setdefault(offer.gpu_model, offer)
            if offer.gpu_model not in rentable and offer.availability.rentable:
                rentable[offer.gpu_model] = offer
        start += candidates
        pending = {m: found for m, found in pending.items() if m not in rentable and len(found) > start}
    return {model: rentable.get(model, offer) for model, offer in first.items()}


def cheapest_offers(conn: Connection, query: OfferQuery, fx: Mapping[str, object]) -> dict[str, Offer]:
    """``cheapest_by_model`` over the offers ``query`` admits, in catalog order; when ``query`` names
    no billing mode, spot counts only for a model sold on nothing else (the report's cheapest table)."""
    return cheapest_in_and_out_of_scope(conn, query, fx)[0]


def cheapest_in_and_out_of_scope(
    conn: Connection, query: OfferQuery, fx: Mapping[str, object]
) -> tuple[dict[str, Offer], dict[str, Offer]]:
    """(``cheapest_offers``, and per GPU model the cheaper offer outside ``query``'s region scope:
    ``cheaper_outside_by_model``; a spot price outside is never named), one price query for each."""
    inside, outside = offers_in_and_out_of_scope(conn, query, fx, stock=False)
    best = cheapest_by_model(conn, inside)
    if not query.billing:
        spot, _ = offers_in_and_out_of_scope(conn, replace(query, billing=(SPOT,)), fx, stock=False)
        best |= {m: o for m, o in cheapest_by_model(conn, spot).items() if m not in best}
    return best, cheaper_outside_by_model(conn, best, outside)


def cheaper_outside_by_model(
    conn: Connection, inside: Mapping[str, Offer], outside: Iterable[Offer]
) -> dict[str, Offer]:
    """Per GPU model, the cheapest of ``outside`` (offers outside the asked-for scope) that can be
    rented now, where it costs less per GPU-hour than ``inside``'s offer of that model (or there is
    none): the per-GPU-hour twin of ``planner.pricing.rank.cheaper_outside`` (gpus --value, the report)."""
    away = cheapest_by_model(conn, outside)
    return {
        m: o
        for m, o in away.items()
        if o.availability.rentable and (m not in inside or o.cny_per_gpu_hour < inside[m].cny_per_gpu_hour)
    }


# --- the job ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """``gpus`` GPUs for ``hours`` wall-clock hours over ``days`` calendar days, on ``price_basis``."""

    gpus: int
    hours: float
    days: int
    price_basis: str = LATEST  # "latest", or the window's "median" or "min"
    history_days: int = HISTORY_DAYS

    @classmethod
    def check(
        cls,
        gpus: int,
        hours: float,
        days: int | None = None,
        price_basis: str = LATEST,
        history_days: int = HISTORY_DAYS,
    ) -> Job:
        """The job, or a QuantityError naming the quantity: hours in (0, ten years], 1 to MAX_GPUS GPUs, the
        days (default: the fewest that hold the hours) long enough for the hours."""
        if (
            isinstance(hours, bool)
            or not isinstance(hours, int | float)
            or not math.isfinite(hours)
            or hours <= 0
        ):
            raise QuantityError("hours", f"must be a positive number, got {hours!r}", "500")
        if hours > MAX_HOURS:
            raise QuantityError(
                "hours", f"{hours:g} is more than ten years", hint="quote at most 87600 hours"
            )
        if gpus < 1 or gpus > MAX_GPUS:
            raise QuantityError("gpus", f"must be between 1 and {MAX_GPUS}, got {gpus}", "8")
        needed_days = math.ceil(hours / HOURS_PER_DAY)
        if days is None:
            days = needed_days
        elif days < 1:
            raise QuantityError("days", f"must be at least 1, got {days}", "30, or leave it out")
        elif days * HOURS_PER_DAY > MAX_HOURS:
            raise QuantityError("days", f"{days} is more than ten years", "30, or leave it out")
        elif hours > days * HOURS_PER_DAY:
            raise UsageError(
                f"{hours:g} hours do not fit in {days} days (at most {days * HOURS_PER_DAY} hours)",
                hint=f"spread it over {needed_days} days or more, or run fewer hours",
            )
        return cls(gpus, float(hours), days, check_basis(price_basis), history_days)

    @classmethod
    def of_work(
        cls,
        offer: Offer,
        gpu_hours: float,
        min_gpus: int,
        max_gpus: int | None = None,
        price_basis: str = LATEST,
    ) -> Job | None:
        """``gpu_hours`` of work on whole instances of ``offer``, at least ``min_gpus`` GPUs, every GPU
        busy (data parallel: time scales as 1/GPUs) and run as one continuous job; None when the offer
        cannot serve it (a vGPU slice, more GPUs than ``max_gpus``, more than ten years)."""
        if offer.is_vgpu:
            return None
        per_instance = int(offer.gpus_per_instance)
        gpus = math.ceil(min_gpus / per_instance) * per_instance
        if max_gpus is not None and gpus > max_gpus:
            return None
        hours = gpu_hours / gpus
        if hours > MAX_HOURS:
            return None
        return cls(gpus, hours, math.ceil(hours / HOURS_PER_DAY), price_basis)


@dataclass(frozen=True)
class JobCost:
    """A job costed on one offer: whole instances, the units paid and the total in CNY (unrounded)."""

    offer: Offer
    job: Job
    instances: int
    unit_price: Decimal  # the price costed: the latest, or the basis below
    price_basis: str  # what unit_price is; "latest" where the window has too few prices
    units_paid: Decimal
    total_cny: Decimal  # unrounded: ranking uses it; round only to show it
    tiers_used: tuple[TierUse, ...] = ()  # the hourly steps paid, when more than the first
    history: Recent | None = None
    subscription_breakeven_hours_per_month: Decimal | None = None

    @property
    def gpus(self) -> int:
        return self.job.gpus

    @property
    def hours(self) -> float:
        return self.job.hours

    @property
    def idle_gpus(self) -> float:
        """GPUs paid for that the job leaves unused (whole instances)."""
        return self.instances * self.offer.gpus_per_instance - self.job.gpus

    @property
    def cny_per_gpu_hour(self) -> Decimal:
        """The total over the GPU-hours of work (idle GPUs make it dearer), unrounded."""
        return self.total_cny / (Decimal(str(self.job.hours)) * self.job.gpus)

    @property
    def availability(self) -> Availability:
        """Can the GPUs paid for be rented now? Whole instances need all their GPUs idle, not only
        the job's (a 1-GPU job on an 8-GPU instance needs 8 idle cards). An offer its provider no longer
        lists cannot be rented at all."""
        if self.offer.unlisted_at is not None:
            return Availability.NOT_LISTED
        return availability(self.offer.stock, self.gpus_paid, self.gpus_on_one_machine)

    @property
    def gpus_paid(self) -> float:
        """The GPUs of the whole instances paid for, idle ones included."""
        return self.instances * self.offer.gpus_per_instance

    @property
    def gpus_on_one_machine(self) -> int:
        """The job's GPUs that must be idle on one marketplace machine (0 on cloud instances)."""
        return self.offer.gpus_on_one_machine(self.instances)

    @property
    def rentable(self) -> bool:
        return self.availability.rentable

    @property
    def machines(self) -> int:
        """Separate machines the job spans: instances, or a marketplace's machines of up to ``MARKET_MACHINE_GPUS``."""
        return self.offer.machines(self.instances)

    @property
    def one_nvlink_domain(self) -> bool:
        """All the job's GPUs on one machine joined by NVLink (a single GPU trivially is)."""
        return self.job.gpus == 1 or (self.machines == 1 and self.link[1] is not None)

    @property
    def link(self) -> tuple[str | None, float | None]:
        """(interconnect label, NVLink GB/s in use) of the job's GPUs; see ``link_between``."""
        o = self.offer
        listing = o.provider in MARKETPLACES
        model = catalog.get_model(o.gpu_model)
        return link_between(model, int(o.gpus_per_instance), self.instances, listing, o.instance_type)

    def total_at(self, unit_price: Decimal) -> Decimal:
        """The total at another unit price, unrounded: every part of it, tiers included (they keep
        their ratio to the base price), scales with the price."""
        return self.total_cny * unit_price / self.unit_price if self.unit_price else self.total_cny

    def to_dict(self) -> dict[str, Any]:
        """The offer's fields, then the job's: what was costed, how, and what it comes to."""
        link, nvlink = self.link
        return self.offer.to_dict() | {
            "instances": self.instances,
            "idle_gpus": self.idle_gpus,
            "gpus": self.job.gpus,
            "hours": self.job.hours,
            "days": self.job.days,
            "unit_price": self.unit_price,
            "price_basis": self.price_basis,
            "latest_unit_price": self.offer.unit_price,
            "units_paid": self.units_paid,
            "tiers": [t.to_dict() for t in self.tiers_used],
            "total_cny": shown_total(self.total_cny),
            "cny_per_gpu_hour": self.cny_per_gpu_hour.quantize(Decimal("0.0001")),
            "cny_per_gpu_hour_basis": job_price(self).basis,  # this job's cost, for its hours
            "link": link,
            "nvlink_gbps_bidir": nvlink,
            "subscription_breakeven_hours_per_month": self.subscription_breakeven_hours_per_month,
            "stock_state": self.availability.value,  # what the provider's stock means for this job
            "unavailable": not self.rentable,
            "trend": self.history.trend if self.history else None,
            "history": self.history.to_dict() if self.history else None,
        }


def job_cost(offer: Offer, job: Job, history: Recent | None = None) -> JobCost:
    """What ``job`` costs on ``offer``: ceil(N/k) whole instances; hourly modes pay the hours (the tiers
    keep their ratio to the base price on every basis), subscriptions the periods covering the days;
    on ``job.price_basis`` where ``history`` has it, else on the latest price."""
    instances = math.ceil(job.gpus / offer.gpus_per_instance)
    basis = job.price_basis if history is not None else LATEST
    priced = offer.at_price(history.price(basis)) if history is not None else offer
    used: tuple[TierUse, ...] = ()
    if offer.billing in HOURLY_MODES:
        units = Decimal(str(job.hours))
        if priced.tiers:
            per_instance, used = tier_uses(priced.unit_price, priced.tiers, units)
        else:
            per_instance = priced.unit_price * units
    else:
        units = Decimal(math.ceil(job.days / DAYS_PER_PERIOD[offer.billing]))
        per_instance = priced.unit_price * units
    total = per_instance * instances * offer.cny_per_currency
    return JobCost(
        offer=offer,
        job=job,
        instances=instances,
        unit_price=priced.unit_price,
        price_basis=basis,
        units_paid=units,
        total_cny=total,
        tiers_used=used if len(used) > 1 else (),
        history=history,
    )


def with_breakeven(best: Iterable[JobCost], costs: Iterable[JobCost]) -> list[JobCost]:
    """``best`` with the monthly-against-on-demand break-even of their instance where ``costs`` hold
    both modes, each at the price it was costed at (the latest, or the 30-day basis)."""
    hourly: dict[int, Offer] = {}
    monthly: dict[int, Offer] = {}
    for cost in costs:
        if cost.offer.billing in (ON_DEMAND, MONTHLY):
            by_mode = hourly if cost.offer.billing == ON_DEMAND else monthly
            by_mode[cost.offer.instance_id] = cost.offer.at_price(cost.unit_price)
    out = []
    for cost in best:
        iid = cost.offer.instance_id
        if iid in hourly and iid in monthly:
            cost = replace(
                cost, subscription_breakeven_hours_per_month=breakeven_hours(hourly[iid], monthly[iid])
            )
        out.append(cost)
    return out


# --- showing money ------------------------------------------------------------------------------


def shown_total(total: Decimal) -> Decimal:
    """A total rounded for people: to the fen, with more places under 10 CNY so that an order decided
    by fractions of a fen can still be seen (four significant figures)."""
    if total >= 10 or total == 0:
        return total.quantize(CENTS)
    places = max(2, 3 - total.adjusted())
    return total.quantize(Decimal(1).scaleb(-places))
