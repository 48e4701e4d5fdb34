"""The quote engine: the cost of a whole job (N GPUs for H wall-clock hours spread over D calendar
days) on every instance that carries the GPU, each instance once on its best billing mode.

The rules are ``planner.pricing``'s, the ones ``plan`` and ``gpus --value`` use (tested in
tests/test_quote.py and tests/test_pricing*.py):
- whole instances are paid for; hourly modes pay the hours (Tencent's tiers), subscriptions the whole
  periods covering D days; ``spot`` only when asked for, and flagged as interruptible;
- options that cannot be rented now (sold out, short of idle GPUs, idle but not orderable, at the
  provider's last refresh) are listed after the rentable ones and never recommended;
- cheapest first on unrounded totals; totals within 0.5% (or 1 CNY) go to fewer machines, then the
  wider NVLink;
- a marketplace's price (AutoDL) is its cheapest listing for that GPU and region, one GPU per
  "instance"; its median listing rides along as ``median_unit_price``, never as an option of its own;
- the price basis (``latest`` by default) may be the 30-day ``median`` or ``min`` of each option's own
  prices (``planner.recent``); an option with fewer than two observations in its window is costed on its
  latest price and says so (``price_basis``). Every option shown carries its 30-day min / median / max
  and trend where it has that history.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from planner.errors import UsageError
from planner.pricing import (
    ALL,
    TIE_CNY,
    TIE_SHARE,
    Job,
    JobCost,
    Offer,
    OfferQuery,
    cheapest_per_instance,
    job_cost,
    latest_offers,
    price_key,
    rank_costs,
    with_breakeven,
    with_stock,
)
from planner.pricing import (
    MAX_GPUS as MAX_GPUS,
)
from planner.pricing import (
    MAX_HOURS as MAX_HOURS,
)
from planner.pricing import tiered_cost as tiered_cost  # re-exported: older callers cost tiers here
from planner.pricing import tiers_of as tiers_of
from planner.recent import HISTORY_DAYS, LATEST, recent_prices

if TYPE_CHECKING:  # a bad argument is refused before SQLAlchemy is imported: db is imported on use
    from sqlalchemy.engine import Connection

NOTHING_RENTABLE = "every option is sold out or short of idle GPUs at its provider's last refresh"


@dataclass(frozen=True)
class QuoteRequest:
    """What the user asked: ``gpus`` GPUs of ``gpu`` for ``hours`` wall-clock hours over ``days`` days,
    within the filters; ``validate`` splits it into the one filter and the one job of
    ``planner.pricing``."""

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
    scope: str = ALL


def validate(request: QuoteRequest) -> tuple[OfferQuery, Job]:
    """Check the request and canonicalise its names, before any database work."""
    job = Job.check(request.gpus, request.hours, request.days, request.price_basis, request.history_days)
    if request.top is not None and request.top < 1:
        raise UsageError(f"--top must be at least 1, got {request.top}", hint="e.g. --top 5")
    query = OfferQuery.build(
        [request.gpu],
        request.providers,
        request.regions,
        request.billing,
        include_variants=request.include_variants,
        scope=request.scope,
    )
    return query, job


@dataclass(frozen=True)
class Quote:
    request: QuoteRequest
    query: OfferQuery
    job: Job
    options: tuple[JobCost, ...]  # rentable first, cheapest first (``pricing.rank``)
    considered: int  # instances costed

    @property
    def days(self) -> int:
        return self.job.days

    @property
    def gpu_models(self) -> tuple[str, ...]:
        return tuple(m for m in self.query.gpu_models if m not in self.query.variants)

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(m for m in self.query.gpu_models if m in self.query.variants)

    @property
    def recommendation(self) -> JobCost | None:
        """The first option that can be rented now; None when there is none."""
        return next((o for o in self.options if o.rentable), None)

    @property
    def no_recommendation(self) -> str | None:
        """Why nothing is recommended although options are listed."""
        return NOTHING_RENTABLE if self.options and self.recommendation is None else None

    @property
    def passed_over(self) -> tuple[JobCost, ...]:
        """The options cheaper than the recommendation that cannot be rented now."""
        best = self.recommendation
        if best is None:
            return ()
        return tuple(o for o in self.options if not o.rentable and price_key(o) < price_key(best))

    @property
    def as_of(self) -> dt.datetime | None:
        return max((o.offer.observed_at for o in self.options), default=None)

    @property
    def from_snapshot(self) -> bool:
        return any(o.offer.from_snapshot for o in self.options)

    @property
    def observed_between(self) -> tuple[dt.date, dt.date] | None:
        """The first and last day on which the options shown were priced."""
        days = [o.offer.observed_at.date() for o in self.options]
        return (min(days), max(days)) if days else None

    @property
    def snapshot_options(self) -> int:
        """How many options shown come from the bundled snapshot (not imported, not refreshed)."""
        return sum(o.offer.from_snapshot for o in self.options)

    def to_dict(self) -> dict[str, object]:
        r = self.request
        best = self.recommendation
        return {
            "query": {
                "gpu": r.gpu,
                "gpu_models": list(self.gpu_models),
                "china_variants": list(self.variants),
                "gpus": self.job.gpus,
                "hours": self.job.hours,
                "days": self.job.days,
                "providers": list(self.query.providers),
                "regions": list(self.query.regions),
                "billing": list(self.query.billing),
                "scope": self.query.scope,
                "top": r.top,
                "price_basis": self.job.price_basis,
                "history_days": self.job.history_days,
            },
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "observed_from": self.observed_between[0].isoformat() if self.observed_between else None,
            "from_snapshot": self.from_snapshot,
            "snapshot_options": self.snapshot_options,
            "recommendation": option_dict(best) if best else None,
            "no_recommendation": self.no_recommendation,
            "options": [option_dict(o) for o in self.options],
        }


def option_dict(o: JobCost) -> dict[str, object]:
    """One quote option for JSON and CSV (``JobCost.to_dict``)."""
    return o.to_dict()


def quote(conn: Connection, request: QuoteRequest, fx: Mapping[str, object]) -> Quote:
    """Every way to rent the job, rentable first, cheapest first (see the module docstring)."""
    query, job = validate(request)
    # On a median or min basis the history decides the price, so it is read before ranking (for the
    # offers that can reach the top, which needs their stock); on the latest, history is read only for
    # the options shown, and stock only as far down as the top rentable options reach.
    on_history = job.price_basis != LATEST
    offers = latest_offers(conn, query, fx, stock=on_history or not request.top)
    considered = len({o.instance_id for o in offers})
    recent = {}
    if on_history:
        offers = _can_reach_top(conn, offers, job, request.top)
        recent = recent_prices(conn, offers, job.history_days)
    costs = [job_cost(o, job, recent.get(o.key)) for o in offers]
    if not on_history and request.top:
        costs = _stocked_to_top(conn, costs, request.top)
    ranked = rank_costs(with_breakeven(cheapest_per_instance(costs), costs))
    shown = _shown(ranked, request.top)
    if not on_history:
        recent = recent_prices(conn, [o.offer for o in shown], job.history_days)
        shown = [replace(o, history=recent.get(o.offer.key)) for o in shown]
    return Quote(request=request, query=query, job=job, options=tuple(shown), considered=considered)


def _stocked_to_top(conn: Connection, costs: list[JobCost], top: int) -> list[JobCost]:
    """``costs`` with their stock read, cheapest instance first, until ``top`` instances can be rented
    and no instance left unread could come within a tie of the top-th: the options shown are judged on
    their stock, the rest (never shown) are not read at all."""
    by_instance: dict[int, list[JobCost]] = {}
    for cost in costs:
        by_instance.setdefault(cost.offer.instance_id, []).append(cost)
    order = sorted(by_instance, key=lambda iid: min(c.total_cny for c in by_instance[iid]))
    read = 0
    window = 2 * top
    while read < len(order):
        batch = order[read : read + window]
        stocked = iter(with_stock(conn, [c.offer for iid in batch for c in by_instance[iid]]))
        for iid in batch:
            by_instance[iid] = [replace(c, offer=next(stocked)) for c in by_instance[iid]]
        read += len(batch)
        window *= 2
        best = cheapest_per_instance(c for iid in order[:read] for c in by_instance[iid])
        rentable = sorted(c.total_cny for c in best if c.rentable)
        if len(rentable) >= top and read < len(order):
            bound = rentable[top - 1] + max(rentable[top - 1] * TIE_SHARE, TIE_CNY)
            if min(c.total_cny for c in by_instance[order[read]]) > bound:
                break
    return [c for iid in order for c in by_instance[iid]]


def _shown(ranked: list[JobCost], top: int | None) -> list[JobCost]:
    """The ``top`` first rentable options, then those cheaper than the last of them that cannot be
    rented now (so that the passed-over ones are seen); unrentable ones fill up when too few can be."""
    if not top:
        return ranked
    rentable = [o for o in ranked if o.rentable]
    others = [o for o in ranked if not o.rentable]
    if len(rentable) < top:
        return rentable + others[: top - len(rentable)]
    last = price_key(rentable[top - 1])
    return rentable[:top] + [o for o in others if price_key(o) < last]


def _can_reach_top(conn: Connection, offers: Sequence[Offer], job: Job, top: int | None) -> list[Offer]:
    """The offers of the instances that can be among the ``top`` cheapest on a median or min basis.

    A basis price lies between the window's min and max, which the database aggregates cheaply, and a
    job's total grows with its price. So an instance whose total at its min cannot come within a tie of
    the top-th cheapest rentable total at the max of each instance's window is out, and only the rest
    need their series.
    """
    if not top:
        return list(offers)
    from db import queries

    ranges: dict[tuple[int, str], tuple[int, Decimal, Decimal]] = {}
    by_start: dict[dt.date, list[tuple[int, str]]] = {}
    for offer in offers:
        since = offer.observed_at.date() - dt.timedelta(days=job.history_days)
        by_start.setdefault(since, []).append(offer.key)
    for since, keys in by_start.items():
        ranges.update(queries.price_ranges(conn, keys, since))
    lowest: dict[int, Decimal] = {}
    highest: dict[int, Decimal] = {}  # of the rentable offers
    for offer in offers:
        count, low, high = ranges.get(offer.key, (0, offer.unit_price, offer.unit_price))
        if count < 2:  # too little history: costed on the latest price, whatever the basis
            low = high = offer.unit_price
        low_total = job_cost(offer.at_price(low), job).total_cny
        lowest[offer.instance_id] = min(lowest.get(offer.instance_id, low_total), low_total)
        high_cost = job_cost(offer.at_price(high), job)
        if high_cost.rentable:
            iid = offer.instance_id
            highest[iid] = min(highest.get(iid, high_cost.total_cny), high_cost.total_cny)
    if len(highest) <= top:
        return list(offers)
    cutoff = sorted(highest.values())[top - 1]
    cutoff += max(cutoff * TIE_SHARE, TIE_CNY)  # a near-equal total may still win on fewer machines
    return [o for o in offers if lowest[o.instance_id] <= cutoff]
