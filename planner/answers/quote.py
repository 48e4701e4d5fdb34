"""The quote engine: the cost of a whole job (N GPUs for H wall-clock hours spread over D calendar
days) on every instance that carries the GPU, each instance once on its best billing mode.

The rules are ``planner.pricing.cost``'s, the ones ``plan`` and ``gpus --value`` use (tested in
tests/answers/test_quote.py and tests/pricing/):
- whole instances are paid for; hourly modes pay the hours (Tencent's tiers), subscriptions the whole
  periods covering D days; ``spot`` only when asked for, and flagged as interruptible;
- options that cannot be rented now (sold out, short of idle GPUs, idle but not orderable, at the
  provider's last refresh) are listed after the rentable ones and never recommended;
- cheapest first on unrounded totals; ``planner.pricing.words.TIE_RULE`` (the tolerance is
  ``planner.pricing.rank.TIE_SHARE`` or ``TIE_CNY``);
- a marketplace's price (AutoDL) is its cheapest listing for that GPU and region, one GPU per
  "instance"; its median listing rides along as ``median_unit_price``, never as an option of its own;
- the price basis (``latest`` by default) may be the 30-day ``median`` or ``min`` of each option's own
  prices (``planner.pricing.recent``); an option with fewer than two observations in its window is costed on its
  latest price and says so (``price_basis``). Every option shown carries its 30-day min / median / max
  and trend where it has that history.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from planner.answers.near import NearMatch, would_match
from planner.errors import QuantityError
from planner.on_application import OnApplication, for_models
from planner.pricing.cost import (
    ALL,
    Job,
    JobCost,
    OfferQuery,
    job_cost,
    offers_in_and_out_of_scope,
    with_breakeven,
)
from planner.pricing.cost import (
    MAX_GPUS as MAX_GPUS,
)
from planner.pricing.cost import (
    MAX_HOURS as MAX_HOURS,
)
from planner.pricing.offer import NOTHING_RENTABLE, STOCK_COLUMNS, stock_columns
from planner.pricing.query import chosen_scope
from planner.pricing.rank import cheaper_outside, cheapest_per_instance, price_key, rank_costs, stocked_to_top
from planner.pricing.recent import (
    HISTORY_COLUMNS,
    HISTORY_DAYS,
    LATEST,
    check_basis,
    history_columns,
    recent_prices,
)

if TYPE_CHECKING:  # a bad argument is refused before SQLAlchemy is imported: db is imported on use
    from sqlalchemy.engine import Connection

    from planner.config import Config


@dataclass(frozen=True)
class QuoteRequest:
    """What the user asked: ``gpus`` GPUs of ``gpu`` for ``hours`` wall-clock hours over ``days`` days,
    within the filters; ``validate`` splits it into the one filter and the one job of
    ``planner.pricing.cost``."""

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

    @classmethod
    def from_flags(cls, given: Mapping[str, Any], config: Config) -> QuoteRequest:
        """The request a command's flags make, checked by :func:`validate` before any database work.

        ``given`` holds the flags by field name (``gpu``, ``hours``, ``gpus``, ``days``, ``providers``,
        ``regions``, ``billing``, ``include_variants``, ``top``, ``scope``, ``price_basis``), None or
        absent for one not typed. ``top``, ``scope`` and ``price_basis`` not typed come from ``[quote]``
        of ``config`` (a bad setting is refused naming it); ``history_days`` always does.
        """
        settings = config.section("quote")
        top, scope, basis = given.get("top"), given.get("scope"), given.get("price_basis")
        request = cls(
            **{k: given[k] for k in _TYPED_AS_IS if given.get(k) is not None},
            top=top if top is not None else settings["top"],
            scope=chosen_scope(scope, config),
            history_days=settings["history_days"],
            price_basis=basis
            if basis is not None
            else check_basis(settings["price_basis"], "[quote] price_basis in the config"),
        )
        validate(request)
        return request


# The fields of QuoteRequest a flag gives as typed (the rest fall back on the config).
_TYPED_AS_IS = ("gpu", "hours", "gpus", "days", "providers", "regions", "billing", "include_variants")


def validate(request: QuoteRequest) -> tuple[OfferQuery, Job]:
    """Check the request and canonicalise its names, before any database work."""
    job = Job.check(request.gpus, request.hours, request.days, request.price_basis, request.history_days)
    if request.top is not None and request.top < 1:
        raise QuantityError("top", f"must be at least 1, got {request.top}", "5")
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
    options: tuple[JobCost, ...]  # rentable first, cheapest first (``planner.pricing.rank.rank``)
    considered: int  # instances costed
    outside: JobCost | None = None  # a cheaper option outside the region scope (``cheaper_outside``)
    near: NearMatch | None = None  # no option: what the query would match loosened (``answers.near``)

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
    def on_application(self) -> tuple[OnApplication, ...]:
        """Providers renting the GPU asked for only on application (no price): listed, never ranked."""
        return for_models(self.query.gpu_models, self.query.providers)

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
            "as_of": self.as_of,  # emitted as ISO 8601 with its zone by planner.output.to_jsonable
            "observed_from": self.observed_between[0] if self.observed_between else None,
            "from_snapshot": self.from_snapshot,
            "snapshot_options": self.snapshot_options,
            "recommendation": option_dict(best) if best else None,
            "no_recommendation": self.no_recommendation,
            "cheaper_outside_scope": option_dict(self.outside) if self.outside else None,
            "options": [option_dict(o) for o in self.options],
            "on_application": [e.to_dict() for e in self.on_application],  # no price: never an option
            "would_match": self.near.to_dict() if self.near else None,  # no option: what is stored near
        }


def option_dict(o: JobCost) -> dict[str, object]:
    """One quote option for JSON and CSV (``JobCost.to_dict``)."""
    return o.to_dict()


def quote(conn: Connection, request: QuoteRequest, fx: Mapping[str, object]) -> Quote:
    """Every way to rent the job, rentable first, cheapest first (see the module docstring)."""
    query, job = validate(request)
    top = request.top
    # Stock is read only as far down as the top rentable options reach; on a median or min basis the
    # window of each offer's prices bounds its total first, so that only the offers that can reach the
    # top have their history read. On the latest basis, history is read for the options shown only.
    on_history = job.price_basis != LATEST
    offers, outside = offers_in_and_out_of_scope(conn, query, fx, stock=not top)
    considered = len({o.instance_id for o in offers})
    costs = [job_cost(o, job) for o in offers]
    if top:
        costs = stocked_to_top(conn, costs, top, _price_bounds(conn, costs, job) if on_history else None)
    if on_history:
        recent = recent_prices(conn, [c.offer for c in costs], job.history_days)
        costs = [job_cost(c.offer, job, recent.get(c.offer.key)) for c in costs]
    ranked = rank_costs(with_breakeven(cheapest_per_instance(costs), costs))
    shown = _shown(ranked, top)
    if not on_history:
        recent = recent_prices(conn, [o.offer for o in shown], job.history_days)
        shown = [replace(o, history=recent.get(o.offer.key)) for o in shown]
    best = next((o for o in shown if o.rentable), None)
    cheaper = cheaper_outside(conn, best, [job_cost(o, job) for o in outside])
    near = None if shown else would_match(conn, query)  # no option: the same hints as `planner prices`
    return Quote(
        request=request,
        query=query,
        job=job,
        options=tuple(shown),
        considered=considered,
        outside=cheaper,
        near=near,
    )


def _price_bounds(
    conn: Connection, costs: Sequence[JobCost], job: Job
) -> dict[tuple[int, str], tuple[Decimal, Decimal]]:
    """Each offer's total at the min and at the max of its price window (the database aggregates
    them cheaply); at the latest price for both where the window holds fewer than two prices."""
    from db import queries

    ranges: dict[tuple[int, str], tuple[int, Decimal, Decimal]] = {}
    by_start: dict[dt.date, list[tuple[int, str]]] = {}
    for cost in costs:
        since = cost.offer.observed_at.date() - dt.timedelta(days=job.history_days)
        by_start.setdefault(since, []).append(cost.offer.key)
    for since, keys in by_start.items():
        ranges.update(queries.price_ranges(conn, keys, since))
    out = {}
    for cost in costs:
        count, low, high = ranges.get(cost.offer.key, (0, cost.unit_price, cost.unit_price))
        if count < 2:  # too little history: costed on the latest price, whatever the basis
            low = high = cost.unit_price
        out[cost.offer.key] = (cost.total_at(low), cost.total_at(high))
    return out


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


# The CSV of ``planner quote``: an option's JSON fields in the order a spreadsheet reads best, its
# stock and its price history flattened into columns of their own.
CSV_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpus_per_instance",
    "instances",
    "idle_gpus",
    "billing",
    "unit_price",
    "price_basis",
    "latest_unit_price",
    "unit",
    "currency",
    "units_paid",
    "tiers",
    "total_cny",
    "cny_per_gpu_hour",
    "link",
    "nvlink_gbps_bidir",
    "observed_at",
    "age_days",
    "source",
    "from_snapshot",
    "china_variant",
    "gpu_note",
    "interruptible",
    "subscription_breakeven_hours_per_month",
    "median_unit_price",
    "stock_state",
    *STOCK_COLUMNS,
    "unavailable",
    *HISTORY_COLUMNS,
    "trend",
)


def csv_row(option: JobCost) -> dict[str, object]:
    """One option as a row of ``CSV_COLUMNS``."""
    row = option_dict(option)
    row["tiers"] = "; ".join(str(t) for t in option.tiers_used) or None
    row.update(stock_columns(option.offer.stock))
    row.update(history_columns(option.history))
    return row
