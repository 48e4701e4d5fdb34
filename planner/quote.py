"""The quote engine: the cost of a whole job (N GPUs for H wall-clock hours spread over D calendar
days) on every instance that carries the GPU, on each billing mode it is sold on, cheapest first.

Rules (the product's, tested in tests/test_quote.py):
- an instance with k GPUs serves N GPUs as ceil(N/k) instances, and whole instances are paid for;
- ``on_demand`` and ``spot`` cost H hours (Tencent's tiered hourly steps where known); ``spot`` only
  when asked for, and always flagged as interruptible;
- ``daily``/``weekly``/``monthly``/``yearly`` cost the whole periods needed to cover D days;
- each instance appears once, on its cheapest billing mode for this job;
- availability (Tencent/Aliyun sold out, AutoDL idle GPUs) is shown where the provider stated it, from
  its latest refresh; the recommendation is the cheapest option not sold out (all options stay listed);
- a marketplace's price (AutoDL) is its cheapest listing for that GPU and region, one GPU per
  "instance"; its median listing rides along as ``median_unit_price``, never as an option of its own;
- the price basis (``latest`` by default) may be the 30-day ``median`` or ``min`` of each option's own
  prices (``planner.recent``); an option with fewer than two observations in its window is costed on its
  latest price and says so (``price_basis``). Every option shown carries its 30-day min / median / max
  and trend where it has that history.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING

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
from planner.errors import UsageError
from planner.normalize import fx_rate
from planner.providers import canonical_provider
from planner.recent import HISTORY_DAYS, LATEST, Recent, check_basis, recent_prices

if TYPE_CHECKING:  # a bad argument is refused before SQLAlchemy is imported: db is imported on use
    from sqlalchemy.engine import Connection

    from db.queries import Availability, LatestPrice

MAX_HOURS = 24 * 365 * 10
MAX_GPUS = 100_000
CENTS = Decimal("0.01")


@dataclass(frozen=True)
class QuoteRequest:
    """What the user asked: ``gpus`` GPUs of ``gpu`` for ``hours`` wall-clock hours over ``days`` days."""

    gpu: str
    hours: float
    gpus: int = 1
    days: int | None = None
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    billing: tuple[str, ...] = ()
    top: int | None = None
    include_variants: bool = False
    history_days: int = HISTORY_DAYS
    price_basis: str = LATEST  # "latest", or the window's "median" or "min"


@dataclass(frozen=True)
class Option:
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpus_per_instance: float
    instances: int
    idle_gpus: float
    billing: str
    unit_price: Decimal  # the price costed: the latest, or the basis below
    unit: str
    currency: str
    units_paid: Decimal
    total_cny: Decimal
    cny_per_gpu_hour: Decimal
    observed_at: dt.datetime
    source: str | None
    from_snapshot: bool
    is_variant: bool = False
    gpu_note: str | None = None
    interruptible: bool = False
    subscription_breakeven_hours_per_month: Decimal | None = None
    history: Recent | None = None  # the unit price over the window before observed_at, where known
    price_basis: str = LATEST  # what unit_price is; "latest" where the window has too few prices
    latest_unit_price: Decimal | None = None  # the latest price, when unit_price is another basis
    instance_id: int = field(default=0, compare=False)
    # What the provider last said about stock (None: it did not say). Not to be confused with
    # ``idle_gpus`` above: the GPUs of the paid instances this job leaves unused.
    availability: Availability | None = None
    median_unit_price: Decimal | None = None  # a marketplace's median listing (AutoDL)
    # Sold out, or fewer idle GPUs than the job needs (AutoDL), at the provider's last refresh.
    unavailable: bool = False

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "provider": self.provider,
            "region": self.region,
            "instance_type": self.instance_type,
            "gpu_model": self.gpu_model,
            "gpus_per_instance": self.gpus_per_instance,
            "instances": self.instances,
            "idle_gpus": self.idle_gpus,
            "billing": self.billing,
            "unit_price": self.unit_price,
            "price_basis": self.price_basis,
            "latest_unit_price": self.latest_unit_price
            if self.latest_unit_price is not None
            else self.unit_price,
            "unit": self.unit,
            "currency": self.currency,
            "units_paid": self.units_paid,
            "total_cny": self.total_cny,
            "cny_per_gpu_hour": self.cny_per_gpu_hour,
            "observed_at": self.observed_at.isoformat(),
            "source": self.source,
            "from_snapshot": self.from_snapshot,
            "china_variant": self.is_variant,
            "gpu_note": self.gpu_note,
            "interruptible": self.interruptible,
            "subscription_breakeven_hours_per_month": self.subscription_breakeven_hours_per_month,
            "median_unit_price": self.median_unit_price,
            "availability": self.availability.to_dict() if self.availability else None,
            "unavailable": self.unavailable,
            "trend": self.history.trend if self.history else None,
            "history": self.history.to_dict() if self.history else None,
        }
        return out


@dataclass(frozen=True)
class Quote:
    request: QuoteRequest
    days: int
    gpu_models: tuple[str, ...]
    variants: tuple[str, ...]
    options: tuple[Option, ...]
    considered: int

    @property
    def recommendation(self) -> Option | None:
        """The cheapest option not known to be unavailable (the cheapest of all when every one is)."""
        return next((o for o in self.options if not o.unavailable), self.options[0] if self.options else None)

    @property
    def as_of(self) -> dt.datetime | None:
        return max((o.observed_at for o in self.options), default=None)

    @property
    def from_snapshot(self) -> bool:
        return any(o.from_snapshot for o in self.options)

    def to_dict(self) -> dict[str, object]:
        r = self.request
        return {
            "query": {
                "gpu": r.gpu,
                "gpu_models": list(self.gpu_models),
                "china_variants": list(self.variants),
                "gpus": r.gpus,
                "hours": r.hours,
                "days": self.days,
                "providers": list(r.providers),
                "regions": list(r.regions),
                "billing": list(r.billing),
                "top": r.top,
                "price_basis": r.price_basis,
                "history_days": r.history_days,
            },
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "from_snapshot": self.from_snapshot,
            "recommendation": self.recommendation.to_dict() if self.recommendation else None,
            "options": [o.to_dict() for o in self.options],
        }


def validate(request: QuoteRequest) -> tuple[QuoteRequest, int]:
    """Check the request and canonicalise its names; returns it with the days the job spans."""
    hours = request.hours
    if not isinstance(hours, int | float) or not math.isfinite(hours) or hours <= 0:
        raise UsageError(f"--hours must be a positive number, got {hours!r}", hint="e.g. --hours 500")
    if hours > MAX_HOURS:
        raise UsageError(f"--hours {hours:g} is more than ten years", hint="quote at most 87600 hours")
    if request.gpus < 1 or request.gpus > MAX_GPUS:
        raise UsageError(f"--gpus must be between 1 and {MAX_GPUS}, got {request.gpus}", hint="e.g. --gpus 8")
    needed_days = math.ceil(hours / HOURS_PER_DAY)
    days = request.days
    if days is None:
        days = needed_days
    elif days < 1:
        raise UsageError(f"--days must be at least 1, got {days}", hint="e.g. --days 30, or leave it out")
    elif hours > days * HOURS_PER_DAY:
        raise UsageError(
            f"{hours:g} hours do not fit in {days} days (at most {days * HOURS_PER_DAY} hours)",
            hint=f"use --days {needed_days} or more, or fewer --hours",
        )
    if request.top is not None and request.top < 1:
        raise UsageError(f"--top must be at least 1, got {request.top}", hint="e.g. --top 5")
    catalog.resolve_query(request.gpu, include_variants=request.include_variants)  # unknown GPU: exit 2 now
    canonical = QuoteRequest(
        gpu=request.gpu,
        hours=float(hours),
        gpus=request.gpus,
        days=request.days,
        providers=tuple(dict.fromkeys(canonical_provider(p) for p in request.providers)),
        regions=tuple(r.strip() for r in request.regions),
        billing=tuple(dict.fromkeys(canonical_billing(b) for b in request.billing)),
        top=request.top,
        include_variants=request.include_variants,
        history_days=request.history_days,
        price_basis=check_basis(request.price_basis),
    )
    return canonical, days


def quote(conn: Connection, request: QuoteRequest, fx: Mapping[str, object]) -> Quote:
    """Every way to rent the job, cheapest first (see the module docstring for the rules)."""
    from db import queries

    request, days = validate(request)
    selections = catalog.resolve_query(request.gpu, include_variants=request.include_variants)
    variant_of = {s.model.name: s.is_variant for s in selections}
    rows = queries.latest_prices(
        conn,
        gpu_models=list(variant_of),
        providers=request.providers or None,
        regions=request.regions or None,
        billing=request.billing or None,
    )
    wanted_modes = set(request.billing)
    # A vGPU slice (gpu_count < 1) cannot hold one whole GPU's job.
    rows = [r for r in rows if (r.billing != SPOT or SPOT in wanted_modes) and r.gpu_count >= 1]
    considered = len({r.instance_id for r in rows})
    # On a median or min basis the history decides the price, so it is read before ranking (for the
    # rows that can reach the top); on the latest, only for the options shown.
    on_history = request.price_basis != LATEST
    recent: dict[tuple[int, str], Recent] = {}
    if on_history:
        rows = _can_reach_top(conn, rows, request, days, fx)
        recent = recent_prices(conn, rows, request.history_days)
    by_instance: dict[int, list[Option]] = {}
    hourly_by_instance: dict[int, Decimal] = {}
    monthly_by_instance: dict[int, Decimal] = {}
    for row in rows:
        option = _cost(
            row,
            request,
            days,
            fx,
            variant_of.get(row.gpu_model, False),
            recent.get((row.instance_id, row.billing)),
        )
        by_instance.setdefault(row.instance_id, []).append(option)
        rate = fx_rate(row.currency, fx)
        if row.billing == ON_DEMAND:
            hourly_by_instance[row.instance_id] = option.unit_price * rate
        elif row.billing == MONTHLY:
            monthly_by_instance[row.instance_id] = option.unit_price * rate
    best: list[Option] = []
    for iid, options in by_instance.items():
        cheapest = min(options, key=_sort_key)
        if iid in hourly_by_instance and iid in monthly_by_instance:
            breakeven = (monthly_by_instance[iid] / hourly_by_instance[iid]).quantize(Decimal("0.1"))
            cheapest = replace(cheapest, subscription_breakeven_hours_per_month=breakeven)
        best.append(cheapest)
    best.sort(key=_sort_key)
    if request.top:
        best = best[: request.top]
    if not on_history:
        recent = recent_prices(conn, best, request.history_days)
        best = [replace(o, history=recent.get((o.instance_id, o.billing))) for o in best]
    best = _with_availability(conn, best, request.gpus)
    return Quote(
        request=request,
        days=days,
        gpu_models=tuple(n for n, v in variant_of.items() if not v),
        variants=tuple(n for n, v in variant_of.items() if v),
        options=tuple(best),
        considered=considered,
    )


def _can_reach_top(
    conn: Connection, rows: list[LatestPrice], request: QuoteRequest, days: int, fx: Mapping[str, object]
) -> list[LatestPrice]:
    """The rows of the instances that can be among the ``top`` cheapest on a median or min basis.

    A basis price lies between the window's min and max, which the database aggregates cheaply, and a
    job's total grows with its price. So an instance whose total at its min cannot beat the top-th
    cheapest total at the max of each instance's window is out, and only the rest need their series.
    """
    if not request.top:
        return rows
    from db import queries

    ranges: dict[tuple[int, str], tuple[int, Decimal, Decimal]] = {}
    by_start: dict[dt.date, list[tuple[int, str]]] = {}
    for row in rows:
        since = row.observed_at.date() - dt.timedelta(days=request.history_days)
        by_start.setdefault(since, []).append((row.instance_id, row.billing))
    for since, keys in by_start.items():
        ranges.update(queries.price_ranges(conn, keys, since))
    lowest: dict[int, Decimal] = {}
    highest: dict[int, Decimal] = {}
    for row in rows:
        count, low, high = ranges.get((row.instance_id, row.billing), (0, row.price, row.price))
        if count < 2:  # too little history: costed on the latest price, whatever the basis
            low = high = row.price
        low_total = _job_total(row, low, request, days, fx)
        high_total = _job_total(row, high, request, days, fx)
        lowest[row.instance_id] = min(lowest.get(row.instance_id, low_total), low_total)
        highest[row.instance_id] = min(highest.get(row.instance_id, high_total), high_total)
    if len(highest) <= request.top:
        return rows
    # Compared in cents, as options are ranked: a tie in cents is settled by the other sort keys.
    cutoff = sorted(highest.values())[request.top - 1].quantize(CENTS)
    return [r for r in rows if lowest[r.instance_id].quantize(CENTS) <= cutoff]


def _job_total(
    row: LatestPrice, price: Decimal, request: QuoteRequest, days: int, fx: Mapping[str, object]
) -> Decimal:
    """What the job costs in CNY on instances of ``row`` at unit ``price``, unrounded."""
    hours = Decimal(str(request.hours))
    if row.billing in HOURLY_MODES:
        # Tencent's tier steps keep their ratio to the base price on every basis.
        scale = price / row.price if row.tiers and row.price else Decimal(1)
        per_instance = tiered_cost(price, tiers_of(row.tiers, scale), hours)
    else:
        per_instance = price * math.ceil(days / DAYS_PER_PERIOD[row.billing])
    return per_instance * math.ceil(request.gpus / row.gpu_count) * fx_rate(row.currency, fx)


def _cost(
    row: LatestPrice,
    request: QuoteRequest,
    days: int,
    fx: Mapping[str, object],
    is_variant: bool,
    recent: Recent | None = None,
) -> Option:
    """The job on instances of ``row``, at the request's price basis where ``recent`` allows it."""
    instances = math.ceil(request.gpus / row.gpu_count)
    hours = Decimal(str(request.hours))
    basis = request.price_basis if recent is not None else LATEST
    price = recent.price(basis) if recent is not None else row.price
    units = hours if row.billing in HOURLY_MODES else Decimal(math.ceil(days / DAYS_PER_PERIOD[row.billing]))
    total = _job_total(row, price, request, days, fx)
    return Option(
        provider=row.provider,
        region=row.region,
        instance_type=row.instance_type,
        gpu_model=row.gpu_model,
        gpus_per_instance=row.gpu_count,
        instances=instances,
        idle_gpus=instances * row.gpu_count - request.gpus,
        billing=row.billing,
        unit_price=price,
        unit=row.unit,
        currency=row.currency,
        units_paid=units,
        total_cny=total.quantize(CENTS),
        cny_per_gpu_hour=(total / (hours * request.gpus)).quantize(Decimal("0.0001")),
        observed_at=row.observed_at,
        source=row.source,
        from_snapshot=row.run_kind == "snapshot",
        is_variant=is_variant,
        gpu_note=row.gpu_note,
        interruptible=row.billing == SPOT,
        history=recent,
        price_basis=basis,
        latest_unit_price=row.price,
        instance_id=row.instance_id,
        median_unit_price=row.median_price,
    )


def tiered_cost(base_price: Decimal, tiers: Sequence[tuple[int, Decimal]], hours: Decimal) -> Decimal:
    """Cost of ``hours`` at an hourly price that steps down after given hours (Tencent: 96 h, 360 h).

    ``tiers`` are (from_hour, price) for the steps after the first; each hour is paid at the step it
    falls in, like tax brackets.
    """
    bounds = [(Decimal(0), base_price)] + [(Decimal(h), p) for h, p in sorted(tiers)]
    total = Decimal(0)
    for i, (start, price) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else hours
        if hours <= start:
            break
        total += (min(hours, end) - start) * price
    return total


def tiers_of(text: str | None, scale: Decimal = Decimal(1)) -> list[tuple[int, Decimal]]:
    """Stored tiers ``[[from_hour, "price"], ...]`` (``planner.normalize``), each price times ``scale``."""
    if not text:
        return []
    return [(int(h), Decimal(str(p)) * scale) for h, p in json.loads(text)]


def _sort_key(option: Option) -> tuple:
    return (
        option.total_cny,
        option.idle_gpus,
        option.provider,
        option.region,
        option.instance_type,
        option.billing,
    )


def _with_availability(conn: Connection, options: list[Option], gpus: int) -> list[Option]:
    """Attach the latest stock observation of each option's instance and billing mode, where known;
    an option is ``unavailable`` when sold out or when fewer GPUs are idle than the job needs."""
    if not options:
        return options
    from db import queries

    found = queries.current_availability(conn, options)
    out = []
    for option in options:
        stock = found.get((option.instance_id, option.billing))
        if stock is not None:
            short = stock.idle_gpus is not None and stock.idle_gpus < gpus
            option = replace(
                option, availability=stock, unavailable=stock.stock_status == "sold_out" or short
            )
        out.append(option)
    return out
