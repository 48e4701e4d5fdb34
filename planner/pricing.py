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
  rate, on the latest price or a 30-day basis (``planner.recent``);
- ``breakeven_hours``: the hours per month above which a monthly subscription beats the tiered
  on-demand price;
- ``availability``: sold out, short of idle GPUs, idle but not orderable, available or unknown (most
  offers state no stock: they count as rentable);
- ``rank``: rentable first; cheapest first on unrounded totals, but totals within 0.5% or 1 CNY of each
  other go to fewer machines, then to the wider NVLink.

``db.queries`` is imported on use only: a bad argument is refused before SQLAlchemy loads.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from planner import catalog
from planner.billing import (
    DAYS_PER_PERIOD,
    HOURLY_MODES,
    HOURS_PER_DAY,
    MONTHLY,
    ON_DEMAND,
    SPOT,
    canonical_billing,
)
from planner.errors import ConfigError, UnknownNameError, UsageError
from planner.normalize import PriceRejected, fx_rate, per_gpu_hour
from planner.providers import MARKET_MACHINE_GPUS, MARKETPLACES, canonical_provider
from planner.recent import HISTORY_DAYS, LATEST, Recent, check_basis
from planner.regions import region_scope
from planner.units import MAX_GPUS
from vocab import StockStatus

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

    from db.queries import LatestPrice
    from planner.catalog import GpuModel

MAX_HOURS = 24 * 365 * 10
CENTS = Decimal("0.01")
TIE_SHARE = Decimal("0.005")  # totals this close (or within TIE_CNY) are a tie: fewer machines win
TIE_CNY = Decimal(1)

# --- availability -------------------------------------------------------------------------------


class Availability(StrEnum):
    """Whether an offer can be rented now for a job, from the provider's last refresh."""

    AVAILABLE = "available"  # the provider said so (or has enough idle GPUs)
    UNKNOWN = "unknown"  # the provider states no stock: counts as rentable
    SOLD_OUT = "sold_out"
    SHORT = "short"  # fewer idle GPUs than the job needs
    NOT_ORDERABLE = "not_orderable"  # idle, but fewer orderable GPUs than the job needs (AutoDL)

    @property
    def rentable(self) -> bool:
        return self in (Availability.AVAILABLE, Availability.UNKNOWN)


@dataclass(frozen=True)
class Stock:
    """What a provider last said about one instance and billing mode, and when."""

    stock_status: str | None  # available | low | sold_out | unknown | None
    idle_gpus: int | None
    total_gpus: int | None
    observed_at: dt.datetime
    orderable_gpus: int | None = None  # GPUs that can be ordered now (AutoDL's gpu_order_num)

    @classmethod
    def of(cls, record: Any) -> Stock:
        """From a ``db.queries.Availability``; ``orderable_gpus`` where the record carries it."""
        return cls(
            record.stock_status,
            record.idle_gpus,
            record.total_gpus,
            record.observed_at,
            getattr(record, "orderable_gpus", None),
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "stock_status": self.stock_status,
            "idle_gpus": self.idle_gpus,
            "total_gpus": self.total_gpus,
            "orderable_gpus": self.orderable_gpus,
            "observed_at": self.observed_at.isoformat(),
        }


def availability(stock: Stock | None, gpus_needed: float) -> Availability:
    """The one stock rule: can ``gpus_needed`` GPUs be rented now, by what the provider last said?"""
    if stock is None:
        return Availability.UNKNOWN
    if stock.idle_gpus == 0:
        return Availability.SOLD_OUT
    if stock.idle_gpus is not None and stock.idle_gpus < gpus_needed:
        return Availability.SHORT
    # Before the status: AutoDL's idle GPUs that take no order are stored as sold out (db.schema).
    if stock.orderable_gpus is not None and stock.orderable_gpus < gpus_needed:
        return Availability.NOT_ORDERABLE
    if stock.stock_status == StockStatus.SOLD_OUT:
        return Availability.SOLD_OUT
    if stock.stock_status in (StockStatus.AVAILABLE, StockStatus.LOW) or stock.idle_gpus is not None:
        return Availability.AVAILABLE
    return Availability.UNKNOWN


# --- region scope -------------------------------------------------------------------------------

ALL, MAINLAND, OVERSEAS = "all", "mainland", "overseas"
SCOPES: tuple[str, ...] = (ALL, MAINLAND, OVERSEAS)  # ``planner.regions`` says which a region is in


def check_scope(scope: str, given_by: str = "--scope") -> str:
    cleaned = scope.strip().lower()
    if cleaned not in SCOPES:
        raise UnknownNameError(
            f"scope ({given_by})", scope, difflib.get_close_matches(cleaned, SCOPES) or SCOPES
        )
    return cleaned


# --- the filter ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class OfferQuery:
    """Which offers a question is about; build it with ``OfferQuery.build`` (names checked once)."""

    gpu_models: tuple[str, ...] = ()  # canonical catalog names; () for every model
    variants: frozenset[str] = frozenset()  # those of gpu_models that are China variants of the ask
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    billing: tuple[str, ...] = ()  # () for every mode but spot
    scope: str = ALL
    vgpu: bool = False  # keep vGPU slices (fewer than one whole GPU per instance)

    @classmethod
    def build(
        cls,
        gpus: Sequence[str] = (),
        providers: Sequence[str] = (),
        regions: Sequence[str] = (),
        billing: Sequence[str] = (),
        *,
        include_variants: bool = False,
        scope: str = ALL,
        vgpu: bool = False,
    ) -> OfferQuery:
        """Canonical names for what a user typed; UnknownNameError (with near names) for a bad one.

        ``gpus`` are families or models ("A100", "A100-80GB"); a China variant of one ("A800" for
        "A100") only with ``include_variants``, unless the name asks for it itself.
        """
        models: dict[str, bool] = {}
        for query in gpus:
            for selection in catalog.resolve_query(query, include_variants=include_variants):
                models[selection.model.name] = models.get(selection.model.name, True) and selection.is_variant
        return cls(
            gpu_models=tuple(m.name for m in catalog.all_models() if m.name in models),
            variants=frozenset(name for name, is_variant in models.items() if is_variant),
            providers=tuple(dict.fromkeys(canonical_provider(p) for p in providers)),
            regions=tuple(dict.fromkeys(r.strip() for r in regions if r.strip())),
            billing=tuple(dict.fromkeys(canonical_billing(b) for b in billing)),
            scope=check_scope(scope),
            vgpu=vgpu,
        )

    def admits(self, offer: Offer) -> bool:
        """The rules SQL does not apply: spot only when asked for, vGPU slices, region scope."""
        if offer.billing == SPOT and SPOT not in self.billing:
            return False
        if offer.is_vgpu and not self.vgpu:
            return False
        return self.scope == ALL or region_scope(offer.provider, offer.region) == self.scope


# --- the offer ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    """One instance's latest price on one billing mode, as every command sees it."""

    instance_id: int
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpus_per_instance: float
    billing: str
    unit_price: Decimal  # the latest list price, per instance and unit, in ``currency``
    unit: str
    currency: str
    cny_per_currency: Decimal  # the [fx] rate it is costed at (1 for CNY)
    observed_at: dt.datetime
    source: str | None
    from_snapshot: bool
    gpu_note: str | None = None
    china_variant: bool = False
    tiers: tuple[tuple[int, Decimal], ...] = ()  # hourly steps after the first: (from hour, price)
    median_unit_price: Decimal | None = None  # a marketplace's median listing (AutoDL)
    vcpus: int | None = None
    memory_gb: float | None = None
    stock: Stock | None = field(default=None, compare=False)

    @property
    def cny_per_gpu_hour(self) -> Decimal:
        """The list price per GPU-hour, unrounded: a period's price over all its hours (730 a month),
        divided by the instance's GPUs; Tencent's first hourly tier."""
        return per_gpu_hour(self.unit_price * self.cny_per_currency, self.billing, self.gpus_per_instance)

    @property
    def availability(self) -> Availability:
        """Can one instance be rented now?"""
        return availability(self.stock, self.gpus_per_instance)

    @property
    def interruptible(self) -> bool:
        return self.billing == SPOT

    @property
    def age_days(self) -> int:
        """Whole days since the price was observed (UTC days; 0 for today's)."""
        return max(0, (dt.datetime.now(dt.UTC).date() - self.observed_at.date()).days)

    def at_price(self, price: Decimal) -> Offer:
        """This offer at another unit price (a 30-day basis); the hourly tiers keep their ratio to it."""
        if price == self.unit_price:
            return self
        scale = price / self.unit_price if self.unit_price else Decimal(1)
        return replace(self, unit_price=price, tiers=tuple((h, p * scale) for h, p in self.tiers))

    @property
    def is_vgpu(self) -> bool:
        return self.gpus_per_instance < 1 or self.gpus_per_instance != int(self.gpus_per_instance)

    @property
    def key(self) -> tuple[int, str]:
        return (self.instance_id, self.billing)

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "region": self.region,
            "instance_type": self.instance_type,
            "gpu_model": self.gpu_model,
            "gpus_per_instance": self.gpus_per_instance,
            "billing": self.billing,
            "unit_price": self.unit_price,
            "unit": self.unit,
            "currency": self.currency,
            "cny_per_gpu_hour": self.cny_per_gpu_hour,
            "observed_at": self.observed_at.isoformat(),
            "age_days": self.age_days,
            "source": self.source,
            "from_snapshot": self.from_snapshot,
            "china_variant": self.china_variant,
            "gpu_note": self.gpu_note,
            "interruptible": self.interruptible,
            "median_unit_price": self.median_unit_price,
            "availability": self.stock.to_dict() if self.stock else None,  # what the provider said
            "stock_state": self.availability.value,  # what that means for one instance
        }


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
        observed_at=row.observed_at,
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
    said = queries.current_availability(conn, rows) if stock else {}
    offers = (
        offer_of(r, fx, r.gpu_model in query.variants, _stock(said, r), rates[r.currency]) for r in rows
    )
    return [o for o in offers if query.admits(o)]


def _stock(said: Mapping[tuple[int, str], Any], row: LatestPrice) -> Stock | None:
    record = said.get((row.instance_id, row.billing))
    return None if record is None else Stock.of(record)


def with_stock(conn: Connection, offers: Sequence[Offer]) -> list[Offer]:
    """The offers with what their provider said about stock on or after the price's day (bounded
    queries on the stock index, 500 instances each)."""
    if not offers:
        return []
    from db import queries

    found = queries.current_availability(conn, offers)
    return [replace(o, stock=Stock.of(found[o.key])) if o.key in found else o for o in offers]


STOCK_CANDIDATES = 5  # per GPU model, the cheapest offers whose stock ``cheapest_by_model`` reads


def per_gpu_hour_key(offer: Offer) -> tuple:
    return (offer.cny_per_gpu_hour, offer.provider, offer.region, offer.instance_type, offer.billing)


def cheapest_by_model(
    conn: Connection, offers: Iterable[Offer], candidates: int = STOCK_CANDIDATES
) -> dict[str, Offer]:
    """Per GPU model, the offer with the lowest list price per GPU-hour that can be rented now (stock
    read in one bounded query for the ``candidates`` cheapest of each model); the cheapest when none
    of them can. The rule ``gpus --value`` and the report's cheapest table share."""
    by_model: dict[str, list[Offer]] = {}
    for offer in offers:
        by_model.setdefault(offer.gpu_model, []).append(offer)
    chosen = [o for found in by_model.values() for o in sorted(found, key=per_gpu_hour_key)[:candidates]]
    stocked: dict[str, list[Offer]] = {}
    for offer in with_stock(conn, chosen):
        stocked.setdefault(offer.gpu_model, []).append(offer)
    return {
        model: next((o for o in found if o.availability.rentable), found[0])
        for model, found in stocked.items()
    }


def cheapest_offers(conn: Connection, query: OfferQuery, fx: Mapping[str, object]) -> dict[str, Offer]:
    """``cheapest_by_model`` over the offers ``query`` admits, in catalog order; when ``query`` names
    no billing mode, spot counts only for a model sold on nothing else (the report's cheapest table)."""
    best = cheapest_by_model(conn, latest_offers(conn, query, fx, stock=False))
    if not query.billing:
        spot = latest_offers(conn, replace(query, billing=(SPOT,)), fx, stock=False)
        best |= {m: o for m, o in cheapest_by_model(conn, spot).items() if m not in best}
    return best


# --- hourly tiers -------------------------------------------------------------------------------


def tiers_of(text: str | None, scale: Decimal = Decimal(1)) -> list[tuple[int, Decimal]]:
    """Stored tiers ``[[from_hour, "price"], ...]`` (``planner.normalize``), each price times ``scale``."""
    if not text:
        return []
    return [(int(h), Decimal(str(p)) * scale) for h, p in json.loads(text)]


@dataclass(frozen=True)
class TierUse:
    """Hours ``from_hour`` to ``to_hour`` paid at ``unit_price`` (in the offer's currency)."""

    from_hour: Decimal
    to_hour: Decimal
    unit_price: Decimal

    def to_dict(self) -> dict[str, object]:
        return {"from_hour": self.from_hour, "to_hour": self.to_hour, "unit_price": self.unit_price}

    def __str__(self) -> str:
        return f"{_hours(self.from_hour)}-{_hours(self.to_hour)} h at {self.unit_price:,.2f}"


def _hours(value: Decimal) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def tier_uses(
    base_price: Decimal, tiers: Sequence[tuple[int, Decimal]], hours: Decimal
) -> tuple[Decimal, tuple[TierUse, ...]]:
    """Cost of ``hours`` at an hourly price that steps down after given hours (Tencent: 96 h, 360 h),
    and the steps used. ``tiers`` are (from_hour, price) for the steps after the first; each hour is
    paid at the step it falls in, like tax brackets."""
    bounds = [(Decimal(0), base_price)] + [(Decimal(h), p) for h, p in sorted(tiers)]
    total = Decimal(0)
    used = []
    for i, (start, price) in enumerate(bounds):
        if hours <= start:
            break
        end = min(hours, bounds[i + 1][0]) if i + 1 < len(bounds) else hours
        total += (end - start) * price
        used.append(TierUse(start, end, price))
    return total, tuple(used)


def tiered_cost(base_price: Decimal, tiers: Sequence[tuple[int, Decimal]], hours: Decimal) -> Decimal:
    """Cost of ``hours`` on a tiered hourly price (see ``tier_uses``)."""
    return tier_uses(base_price, tiers, hours)[0]


def breakeven_hours(hourly: Offer, monthly: Offer) -> Decimal | None:
    """Hours per month above which ``monthly`` (one instance) costs less than ``hourly`` on its tiered
    on-demand price: the ``h`` where the tiered cost of ``h`` hours equals the monthly price."""
    target = monthly.unit_price * monthly.cny_per_currency / hourly.cny_per_currency
    bounds = [(Decimal(0), hourly.unit_price)] + [(Decimal(h), p) for h, p in sorted(hourly.tiers)]
    spent = Decimal(0)
    for i, (start, price) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else None
        if price <= 0:
            continue
        if end is None or spent + (end - start) * price >= target:
            return (start + (target - spent) / price).quantize(Decimal("0.1"))
        spent += (end - start) * price
    return None


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
        """The job, or a UsageError naming the flag: hours in (0, ten years], 1 to MAX_GPUS GPUs, the
        days (default: the fewest that hold the hours) long enough for the hours."""
        if (
            isinstance(hours, bool)
            or not isinstance(hours, int | float)
            or not math.isfinite(hours)
            or hours <= 0
        ):
            raise UsageError(f"--hours must be a positive number, got {hours!r}", hint="e.g. --hours 500")
        if hours > MAX_HOURS:
            raise UsageError(f"--hours {hours:g} is more than ten years", hint="quote at most 87600 hours")
        if gpus < 1 or gpus > MAX_GPUS:
            raise UsageError(f"--gpus must be between 1 and {MAX_GPUS}, got {gpus}", hint="e.g. --gpus 8")
        needed_days = math.ceil(hours / HOURS_PER_DAY)
        if days is None:
            days = needed_days
        elif days < 1:
            raise UsageError(f"--days must be at least 1, got {days}", hint="e.g. --days 30, or leave it out")
        elif hours > days * HOURS_PER_DAY:
            raise UsageError(
                f"{hours:g} hours do not fit in {days} days (at most {days * HOURS_PER_DAY} hours)",
                hint=f"use --days {needed_days} or more, or fewer --hours",
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
        return availability(self.offer.stock, self.job.gpus)

    @property
    def rentable(self) -> bool:
        return self.availability.rentable

    @property
    def machines(self) -> int:
        """Separate machines the job spans: instances, or a marketplace's machines of up to 8 GPUs."""
        if self.offer.provider in MARKETPLACES and self.offer.gpus_per_instance == 1:
            return math.ceil(self.job.gpus / MARKET_MACHINE_GPUS)
        return self.instances

    @property
    def one_nvlink_domain(self) -> bool:
        """All the job's GPUs on one machine joined by NVLink (a single GPU trivially is)."""
        return self.job.gpus == 1 or (self.machines == 1 and self.link[1] is not None)

    @property
    def link(self) -> tuple[str | None, float | None]:
        """(interconnect label, NVLink GB/s in use) of the job's GPUs; see ``link_between``."""
        o = self.offer
        listing = o.provider in MARKETPLACES
        return link_between(catalog.get_model(o.gpu_model), int(o.gpus_per_instance), self.instances, listing)

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


# --- ranking ------------------------------------------------------------------------------------

T = TypeVar("T")


def price_key(cost: JobCost) -> tuple:
    o = cost.offer
    return (cost.total_cny, cost.idle_gpus, o.provider, o.region, o.instance_type, o.billing)


def tie_key(cost: JobCost) -> tuple:
    """Among near-equal totals: fewer machines, then inside one NVLink domain, then the cheaper."""
    return (cost.machines, not cost.one_nvlink_domain, *price_key(cost))


def is_tie(cheaper: Decimal, dearer: Decimal) -> bool:
    """Whether two totals are within 0.5% (or 1 CNY) of each other."""
    return dearer - cheaper <= max(cheaper * TIE_SHARE, TIE_CNY)


def rank_costs(costs: Iterable[JobCost]) -> list[JobCost]:
    """``rank`` for job costs themselves."""
    return rank(costs, lambda c: c)


def rank(items: Iterable[T], cost_of: Callable[[T], JobCost]) -> list[T]:
    """Rentable first, then the rest; each part cheapest first on unrounded totals, where a run of
    totals within a tie of its cheapest is ordered by ``tie_key`` (fewer machines, wider NVLink)."""
    items = list(items)
    out: list[T] = []
    for part in ([i for i in items if cost_of(i).rentable], [i for i in items if not cost_of(i).rentable]):
        ordered = sorted(part, key=lambda i: price_key(cost_of(i)))
        start = 0
        while start < len(ordered):
            head = cost_of(ordered[start]).total_cny
            end = start + 1
            while end < len(ordered) and is_tie(head, cost_of(ordered[end]).total_cny):
                end += 1
            cluster = ordered[start:end]
            out += sorted(cluster, key=lambda i: tie_key(cost_of(i))) if len(cluster) > 1 else cluster
            start = end
    return out


def cheapest_per_instance(costs: Iterable[JobCost]) -> list[JobCost]:
    """Each instance once, on its best billing mode for the job: the cheapest it can be rented on now
    (the cheapest of all when none). One instance's modes share its machines, so ``rank``'s tie rule
    has nothing to add."""
    best: dict[int, tuple[tuple, JobCost]] = {}
    for cost in costs:
        key = (not cost.rentable, *price_key(cost))
        iid = cost.offer.instance_id
        if iid not in best or key < best[iid][0]:
            best[iid] = (key, cost)
    return [cost for _, cost in best.values()]


Bounds = Mapping[tuple[int, str], tuple[Decimal, Decimal]]


def stocked_to_top(
    conn: Connection, costs: list[JobCost], top: int, bounds: Bounds | None = None
) -> list[JobCost]:
    """The costs of the instances that can be shown among the ``top``, with their stock read.

    ``bounds`` holds each offer's lowest and highest total over its price window (a median or min
    basis lies between them); without it both are the total. Instances are read cheapest first until
    ``top`` of them can be rented and the next one's lowest total is beyond a tie of the top-th
    rentable highest total: nothing after that can be shown, so its stock is never read.
    """
    return stocked_to_top_each(conn, [costs], top, bounds)[0]


def stocked_to_top_each(
    conn: Connection, groups: Sequence[list[JobCost]], top: int, bounds: Bounds | None = None
) -> list[list[JobCost]]:
    """``stocked_to_top`` for several groups at once (a plan's GPU models): each round reads the
    stock every unfinished group still needs in one query."""

    def low(c: JobCost) -> Decimal:
        return bounds[c.offer.key][0] if bounds else c.total_cny

    def high(c: JobCost) -> Decimal:
        return bounds[c.offer.key][1] if bounds else c.total_cny

    states = []
    for costs in groups:
        by_instance: dict[int, list[JobCost]] = {}
        for cost in costs:
            by_instance.setdefault(cost.offer.instance_id, []).append(cost)
        lowest = {iid: min(low(c) for c in found) for iid, found in by_instance.items()}
        states.append((by_instance, lowest, sorted(lowest, key=lowest.__getitem__)))
    read = [0] * len(groups)
    done: list[list[JobCost] | None] = [None] * len(groups)
    window = 2 * top  # one read is usually enough: a query for 20 instances costs what 10 do
    while any(d is None for d in done):
        wanted = []
        for g, (_, _, order) in enumerate(states):
            if done[g] is None:
                wanted += [(g, iid) for iid in order[read[g] : read[g] + window]]
        stocked = iter(with_stock(conn, [c.offer for g, iid in wanted for c in states[g][0][iid]]))
        for g, iid in wanted:
            by_instance = states[g][0]
            by_instance[iid] = [replace(c, offer=next(stocked)) for c in by_instance[iid]]
        for g, (by_instance, lowest, order) in enumerate(states):
            if done[g] is not None:
                continue
            read[g] = min(len(order), read[g] + window)
            highs = sorted(
                min(high(c) for c in by_instance[iid] if c.rentable)
                for iid in order[: read[g]]
                if any(c.rentable for c in by_instance[iid])
            )
            if len(highs) >= top:
                bound = highs[top - 1] + max(highs[top - 1] * TIE_SHARE, TIE_CNY)
                if read[g] == len(order) or lowest[order[read[g]]] > bound:
                    done[g] = [c for iid in order if lowest[iid] <= bound for c in by_instance[iid]]
                    continue
            if read[g] == len(order):
                done[g] = [c for iid in order for c in by_instance[iid]]
        window *= 2
    return [d for d in done if d is not None]


# --- showing money ------------------------------------------------------------------------------


def shown_total(total: Decimal) -> Decimal:
    """A total rounded for people: to the fen, with more places under 10 CNY so that an order decided
    by fractions of a fen can still be seen (four significant figures)."""
    if total >= 10 or total == 0:
        return total.quantize(CENTS)
    places = max(2, 3 - total.adjusted())
    return total.quantize(Decimal(1).scaleb(-places))


# --- interconnect -------------------------------------------------------------------------------

ACROSS_INSTANCES = " + network"  # GPUs on different machines talk over the provider's network
NETWORK_ONLY = "network only"  # one GPU per instance: nothing but the network joins them
ONE_MACHINE = " (one machine)"  # a marketplace's GPUs, as many as one of its machines holds


def link_between(
    model: GpuModel, gpus_per_instance: int, instances: int, per_gpu_listing: bool = False
) -> tuple[str | None, float | None]:
    """How the GPUs of a rental talk: (label, NVLink GB/s they use), or (None, None) for a single GPU.

    Inside one instance, the model's link (``catalog.interconnect_label``, per GPU model: the instance's
    actual packaging, SXM or PCIe, is not known); across instances, the provider's network too, so
    ``link_between(H800, 8, 2) == ("NVLink (cut) 400 GB/s + network", 400.0)`` and 1-GPU instances give
    ``("network only", None)``. A marketplace's per-GPU listings (``per_gpu_listing``, AutoDL) are GPUs
    of shared machines: up to ``MARKET_MACHINE_GPUS`` of them can be rented on one machine and talk over
    its link, more need the network too.
    """
    gpus = gpus_per_instance * instances
    if gpus <= 1:
        return None, None
    if per_gpu_listing and gpus_per_instance == 1:
        if gpus <= MARKET_MACHINE_GPUS:
            return catalog.interconnect_label(model) + ONE_MACHINE, model.nvlink_gbps_bidir
        return catalog.interconnect_label(model) + ACROSS_INSTANCES, model.nvlink_gbps_bidir
    if gpus_per_instance <= 1:
        return NETWORK_ONLY, None
    label = catalog.interconnect_label(model) + (ACROSS_INSTANCES if instances > 1 else "")
    return label, model.nvlink_gbps_bidir
