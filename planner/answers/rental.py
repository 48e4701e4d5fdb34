"""Renting for a workload: what a given amount of work costs on each offer of a GPU model, for
``planner plan`` and the renting side of ``planner tco``.

The costing, stock and ranking rules are ``planner.pricing.cost``'s (the quote engine's), with one
difference that matters for a workload: the GPU count is not fixed. A job that needs n GPUs, on an
instance type with k GPUs, rents ceil(n/k) instances and runs on all their GPUs (data parallel, so
time scales as 1/GPUs), instead of paying for GPUs that sit idle (``pricing.Job.of_work``). When n is a
multiple of k the total is exactly what ``planner quote --gpus n`` charges (a test checks).

Price history is read only for the offers asked about, over a 30-day window, in bounded queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from planner.pricing.cost import ALL, Job, JobCost, Offer, OfferQuery, job_cost, offers_in_and_out_of_scope
from planner.pricing.rank import cheaper_outside, rank_costs
from planner.pricing.recent import HISTORY_DAYS, LATEST, Recent, check_basis, recent_prices

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

    from planner.catalog import GpuModel


def rentals(
    offers: Iterable[Offer],
    gpu_hours: float,
    min_gpus: int,
    max_gpus: int | None = None,
    recent: Mapping[tuple[int, str], Recent] | None = None,
    basis: str = LATEST,
) -> list[JobCost]:
    """``gpu_hours`` of work on whole instances of each offer that can serve it, at least ``min_gpus``
    GPUs, every GPU busy (unranked: see ``planner.pricing.rank.rank_costs``). With ``recent``, on the 30-day
    ``basis`` where an offer has the history."""
    out = []
    for offer in offers:
        job = Job.of_work(offer, gpu_hours, min_gpus, max_gpus, basis)
        if job is not None:
            out.append(job_cost(offer, job, (recent or {}).get(offer.key)))
    return out


def describe(cost: JobCost) -> str:
    """One line: where, how billed, at what price and from when, for people."""
    o = cost.offer
    price = f"{cost.unit_price:,.4f}".rstrip("0").rstrip(".")
    basis = ""
    if cost.price_basis != LATEST and cost.history:
        basis = (
            f" ({cost.history.days}-day {cost.price_basis} of {cost.history.observations} observations; "
            f"latest {o.unit_price:,.4f}".rstrip("0").rstrip(".")
            + ")"
        )
    where = "bundled snapshot" if o.from_snapshot else (o.source or "no source")
    return (
        f"{o.provider} {o.instance_type} ({o.region}), {o.billing} at {price} {o.currency}"
        f"/{o.unit}{basis}, observed {o.observed_at:%Y-%m-%d}, {where}"
    )


def rental_dict(cost: JobCost) -> dict[str, Any]:
    """A rental for JSON (``JobCost.to_dict``), with the names plan and tco have always used for the
    latest price, the history and the stock."""
    o = cost.offer
    return cost.to_dict() | {
        "latest_price": o.unit_price,
        "recent": cost.history.to_dict() if cost.history else None,
        "stock": o.stock.to_dict() if o.stock else None,
    }


@dataclass(frozen=True)
class RentalCurve:
    """Every way to rent one GPU model, costed for any amount of work (the renting side of ``tco``)."""

    gpu: str
    gpus: int
    offers: tuple[Offer, ...]  # with their stock
    recent: Mapping[tuple[int, str], Recent] = field(default_factory=dict)
    basis: str = "median"
    filtered: bool = False  # the offers were limited by providers or billing modes
    scope: str = ALL  # the region scope of ``offers`` (``OfferQuery.scope``)
    outside: tuple[Offer, ...] = ()  # the offers left out by ``scope`` only, with their stock

    def cheapest(self, work_gpu_hours: Decimal | float) -> JobCost | None:
        """The first rental of this much work by ``planner.pricing.rank.rank``: the cheapest that can be rented now
        (the cheapest of all when none can)."""
        found = rentals(self.offers, float(work_gpu_hours), self.gpus, None, self.recent, self.basis)
        return rank_costs(found)[0] if found else None

    def cheaper_outside(self, conn: Connection, work_gpu_hours: Decimal | float) -> JobCost | None:
        """The rental of this much work outside ``scope`` that ``planner.pricing.rank.cheaper_outside`` names
        (rentable, and cheaper than ``cheapest``), on the same price basis; None when there is none."""
        inside = self.cheapest(work_gpu_hours)
        found = rentals(self.outside, float(work_gpu_hours), self.gpus, None, self.recent, self.basis)
        return cheaper_outside(conn, inside if inside is not None and inside.rentable else None, found)

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
    query: OfferQuery | None = None,
    history_days: int = HISTORY_DAYS,
) -> RentalCurve:
    """The offers of ``gpu`` that ``query`` admits (its providers, regions, billing modes and region
    scope; one query), those outside its scope apart, and unless ``basis`` is latest their 30-day
    history."""
    basis = check_basis(basis)
    query = replace(query or OfferQuery(), gpu_models=(gpu.name,), variants=frozenset())
    offers, outside = offers_in_and_out_of_scope(conn, query, fx)
    recent = recent_prices(conn, [*offers, *outside], history_days) if basis != LATEST else {}
    filtered = bool(query.providers or query.regions or query.billing)
    return RentalCurve(gpu.name, gpus, tuple(offers), recent, basis, filtered, query.scope, tuple(outside))
