"""Renting for a workload: what N GPUs for a given amount of work cost on each instance and billing mode,
with the price history, stock and (for ``planner tco``) the whole rental price curve of one GPU model.

Renting follows the quote engine's rules (``planner.quote``: whole instances are paid for; hourly modes
pay the hours, with Tencent's tiers; subscriptions pay the whole periods that cover the days; spot only
when asked for; vGPU slices never; sold-out offers are not recommended) with one difference that matters
for a workload: the GPU count is not fixed. A job that needs n GPUs, on an instance type with k GPUs,
rents ceil(n/k) instances and runs on all their GPUs (data parallel, so time scales as 1/GPUs), instead
of paying for GPUs that sit idle. When n is a multiple of k the total is exactly what
``planner quote --gpus n`` charges (a test checks).

Price history is read only for the rows asked about, over a 30-day window, in bounded queries.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from db import queries
from planner.billing import DAYS_PER_PERIOD, HOURLY_MODES, HOURS_PER_DAY, SPOT, canonical_billing
from planner.errors import UsageError
from planner.normalize import fx_rate
from planner.providers import canonical_provider
from planner.quote import MAX_HOURS, tiered_cost, tiers_of
from planner.recent import HISTORY_DAYS as HISTORY_DAYS  # re-exported: plan and tco read history here
from planner.recent import PRICE_BASES as PRICE_BASES
from planner.recent import Recent, check_basis
from planner.recent import recent_prices as recent_prices
from planner.tco import TcoResult, tco

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

    from db.queries import Availability, LatestPrice
    from planner.catalog import GpuModel

CENTS = Decimal("0.01")


@dataclass(frozen=True)
class Rental:
    """Whole instances of one type on one billing mode, all their GPUs running the job."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpus_per_instance: int
    instances: int
    gpus: int  # instances × gpus_per_instance, every one busy
    hours: float  # wall-clock hours on `gpus`
    days: int  # calendar days the run spans (subscriptions pay the periods covering them)
    billing: str
    unit_price: Decimal  # the price costed, per instance and unit (latest, or the basis below)
    latest_price: Decimal
    price_basis: str  # "latest", or "median"/"min" of the last 30 days where history exists
    unit: str
    currency: str
    units_paid: Decimal
    total_cny: Decimal
    cny_per_gpu_hour: Decimal  # total / GPU-hours of work
    observed_at: dt.datetime
    source: str | None
    from_snapshot: bool
    gpu_note: str | None
    interruptible: bool
    recent: Recent | None = None
    stock: Availability | None = None  # what the provider last said about stock, where it said
    unavailable: bool = False  # sold out, or fewer GPUs idle than the job uses, at the last refresh
    instance_id: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("recent", "stock", "instance_id")}
        out["recent"] = self.recent.to_dict() if self.recent else None
        out["stock"] = self.stock.to_dict() if self.stock else None
        return out

    def describe(self) -> str:
        """One line: where, how billed, at what price and from when, for people."""
        price = f"{self.unit_price:,.4f}".rstrip("0").rstrip(".")
        basis = ""
        if self.price_basis != "latest" and self.recent:
            basis = (
                f" ({self.recent.days}-day {self.price_basis} of {self.recent.observations} observations; "
                f"latest {self.latest_price:,.4f}".rstrip("0").rstrip(".")
                + ")"
            )
        where = "bundled snapshot" if self.from_snapshot else (self.source or "no source")
        return (
            f"{self.provider} {self.instance_type} ({self.region}), {self.billing} at {price} {self.currency}"
            f"/{self.unit}{basis}, observed {self.observed_at:%Y-%m-%d}, {where}"
        )


def rental_cost(
    row: LatestPrice,
    work_gpu_hours: float,
    min_gpus: int,
    fx: Mapping[str, object],
    max_gpus: int | None = None,
    recent: Recent | None = None,
    basis: str = "latest",
) -> Rental | None:
    """The cost of ``work_gpu_hours`` on instances of ``row``, at least ``min_gpus`` GPUs, all busy.

    None when the instance cannot serve the job: a vGPU slice or fractional GPU count, more GPUs than
    ``max_gpus``, or a run longer than the quote engine's ten years. With ``recent`` and a ``basis`` other
    than latest, the 30-day median or minimum replaces the latest price (tiers scale with it).
    """
    if row.gpu_count < 1 or row.gpu_count != int(row.gpu_count):
        return None
    per_instance_gpus = int(row.gpu_count)
    instances = math.ceil(min_gpus / per_instance_gpus)
    gpus = instances * per_instance_gpus
    if max_gpus is not None and gpus > max_gpus:
        return None
    hours_f = work_gpu_hours / gpus
    if hours_f > MAX_HOURS:
        return None
    price = recent.price(basis) if recent is not None and basis != "latest" else row.price
    used_basis = basis if recent is not None else "latest"
    hours = Decimal(str(hours_f))
    days = math.ceil(hours_f / HOURS_PER_DAY)
    if row.billing in HOURLY_MODES:
        units = hours
        scale = price / row.price if row.tiers and row.price else Decimal(1)
        per_instance = tiered_cost(price, tiers_of(row.tiers, scale), hours)
    else:
        units = Decimal(math.ceil(days / DAYS_PER_PERIOD[row.billing]))
        per_instance = price * units
    total = per_instance * instances * fx_rate(row.currency, fx)
    return Rental(
        provider=row.provider,
        region=row.region,
        instance_type=row.instance_type,
        gpu_model=row.gpu_model,
        gpus_per_instance=per_instance_gpus,
        instances=instances,
        gpus=gpus,
        hours=hours_f,
        days=days,
        billing=row.billing,
        unit_price=price,
        latest_price=row.price,
        price_basis=used_basis,
        unit=row.unit,
        currency=row.currency,
        units_paid=units,
        total_cny=total.quantize(CENTS),
        cny_per_gpu_hour=(total / Decimal(str(work_gpu_hours))).quantize(Decimal("0.0001")),
        observed_at=row.observed_at,
        source=row.source,
        from_snapshot=row.run_kind == "snapshot",
        gpu_note=row.gpu_note,
        interruptible=row.billing == SPOT,
        recent=recent,
        instance_id=row.instance_id,
    )


def rental_key(r: Rental) -> tuple:
    return (r.total_cny, r.hours, r.provider, r.region, r.instance_type, r.billing)


def _stocked(rental: Rental, stock: Availability | None) -> Rental:
    """``rental`` with the provider's stock; unavailable when sold out or when fewer GPUs are idle
    than it uses (the quote engine's rule)."""
    if stock is None:
        return rental
    short = stock.idle_gpus is not None and stock.idle_gpus < rental.gpus
    return replace(rental, stock=stock, unavailable=stock.stock_status == "sold_out" or short)


def with_stock(conn: Connection, rentals: Sequence[Rental]) -> list[Rental]:
    """The rentals with the provider's latest stock attached (one bounded query)."""
    if not rentals:
        return []
    found = queries.current_availability(conn, rentals)
    return [_stocked(r, found.get((r.instance_id, r.billing))) for r in rentals]


def first_available(rentals: Sequence[Rental]) -> Rental | None:
    """The cheapest rental not known to be unavailable; the cheapest of all when every one is."""
    return next((r for r in rentals if not r.unavailable), rentals[0] if rentals else None)


@dataclass(frozen=True)
class RentalCurve:
    """Every way to rent one GPU model, costed for any amount of work (the renting side of ``tco``)."""

    gpu: str
    gpus: int
    rows: tuple[LatestPrice, ...]
    recent: Mapping[tuple[int, str], Recent]
    fx: Mapping[str, object]
    basis: str = "median"
    stock: Mapping[tuple[int, str], Availability] = field(default_factory=dict)
    filtered: bool = False  # the rows were limited by --provider or --billing

    def cheapest(self, work_gpu_hours: Decimal | float) -> Rental | None:
        """The cheapest rental of this much work not known to be sold out (else the cheapest)."""
        work = float(work_gpu_hours)
        rentals = []
        for row in self.rows:
            key = (row.instance_id, row.billing)
            rental = rental_cost(row, work, self.gpus, self.fx, None, self.recent.get(key), self.basis)
            if rental is not None:
                rentals.append(_stocked(rental, self.stock.get(key)))
        return first_available(sorted(rentals, key=rental_key))

    def rate_at(self, work_gpu_hours: Decimal) -> Decimal | None:
        """CNY per GPU-hour of the cheapest rental for this much work (unrounded)."""
        best = self.cheapest(work_gpu_hours)
        return None if best is None else best.total_cny / Decimal(str(float(work_gpu_hours)))


def rental_curve(
    conn: Connection,
    gpu: GpuModel,
    gpus: int,
    fx: Mapping[str, object],
    basis: str = "median",
    providers: Sequence[str] = (),
    billing: Sequence[str] = (),
    history_days: int = HISTORY_DAYS,
) -> RentalCurve:
    """The rows that can rent ``gpu`` (one query) and, unless ``basis`` is latest, their 30-day history."""
    basis = check_basis(basis)
    modes = tuple(dict.fromkeys(canonical_billing(b) for b in billing))
    rows = [
        r
        for r in queries.latest_prices(
            conn,
            gpu_models=[gpu.name],
            providers=[canonical_provider(p) for p in providers] or None,
            billing=list(modes) or None,
        )
        if r.billing != SPOT or SPOT in modes
    ]
    recent = recent_prices(conn, rows, history_days) if basis != "latest" else {}
    stock = queries.current_availability(conn, rows)
    return RentalCurve(gpu.name, gpus, tuple(rows), recent, fx, basis, stock, bool(providers or billing))


def rent_vs_buy(
    curve: RentalCurve,
    gpu: GpuModel,
    hours: float | None,
    utilization: float | None,
    years: float | Decimal | None,
    **buy: Any,
) -> tuple[TcoResult, Rental]:
    """``planner.tco.tco`` with the rental price of ``curve`` for the same work; also the rental used.

    ``buy`` holds tco's keyword arguments for the buying side (purchase price, power, resale, ...).
    The rental is the cheapest for the same busy GPU-hours run as one continuous job (the quote
    engine's default days), all GPUs of the rented instances busy.
    """
    checked = check_tco(gpu, hours, utilization, curve.gpus, years, **buy)
    best = curve.cheapest(checked.gpu_hours)
    if best is None:
        raise UsageError(
            f"no rental price for {gpu.name} in the database"
            + (" for this much work" if curve.rows else "")
            + (" with these --provider/--billing filters" if curve.filtered else ""),
            "give one with --rent-price CNY per GPU-hour, or load prices: planner refresh / planner import",
        )
    rate_at: Callable[[Decimal], Decimal | None] = curve.rate_at
    result = tco(
        gpu,
        best.total_cny / checked.gpu_hours,
        hours,
        gpus=curve.gpus,
        years=years,
        utilization=utilization,
        rent_rate_at=rate_at,
        rent_note=best.describe(),
        **buy,
    )
    return result, best


def check_tco(
    gpu: GpuModel,
    hours: float | Decimal | None,
    utilization: float | Decimal | None,
    gpus: int,
    years: float | Decimal | None,
    **buy: Any,
) -> TcoResult:
    """Refuse bad rent-against-buy inputs before any database work: the pure model at a placeholder
    rental price checks every input and says how much work it is."""
    return tco(gpu, Decimal(1), hours, gpus=gpus, years=years, utilization=utilization, **buy)
