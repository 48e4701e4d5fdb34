"""GPU value for money: dense BF16/FP16 TFLOPS and GB of memory per CNY, at each GPU model's cheapest
current rental price and (with ``buy``) per purchase yuan. ``planner gpus --value`` is a shell over
``value_ranking``.

Rules (tested in tests/answers/test_gpus_value.py):
- a model's rental price is its cheapest CNY per GPU-hour over every provider, region and instance type
  that carries it: each instance's latest price in CNY (foreign prices at the ``[fx]`` rate) divided by
  its GPUs (AutoDL's prices are per GPU already);
- on-demand (hourly) prices only unless ``billing`` names modes: "current rental price" means what an
  hour costs today without a commitment. A subscription price counts per hour of its period
  (``planner.billing``: 730 hours a month), as if the GPU were busy all the time. Spot only when asked
  for; vGPU slices (fewer than one GPU) never;
- prices are list prices as stored: Tencent's first hourly tier, a marketplace's (AutoDL) cheapest
  listing;
- an offer that cannot be rented now (``planner.pricing.cost.availability`` for one instance: sold out,
  short of idle GPUs, idle but not orderable) is passed over for the next cheapest; stock is read for
  the five cheapest offers of each model (``planner.pricing.cost.cheapest_by_model``), and when all of them
  are sold out the cheapest is used and marked ``sold_out``. Most offers state no stock: they count as available;
- with ``buy`` the ranking is per purchase yuan (per 10,000 CNY, so the figures read like the rental
  ones): the catalog's China price per card, or its US price at the ``[fx]`` USD rate where that is all
  it has (``purchase_price_basis`` says which; the US price carries no China premium). Rental figures
  ride along where the model has a current price;
- a model without the figures its ranking needs (a price, or a dense TFLOPS figure when ranking by
  TFLOPS) is not ranked; ``not_ranked`` says why.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from planner import catalog
from planner.billing import ON_DEMAND
from planner.errors import UnknownNameError
from planner.money import PriceRejected, fx_rate
from planner.pricing.cost import (
    ALL,
    Offer,
    OfferQuery,
    cheaper_outside_by_model,
    cheapest_by_model,
    offers_in_and_out_of_scope,
)
from planner.pricing.query import chosen_scope, models, scope_words
from planner.pricing.rank import LeftOut
from planner.wording import Phrase

if TYPE_CHECKING:  # a bad argument is refused before SQLAlchemy is imported: db is imported on use
    from sqlalchemy.engine import Connection

    from planner.catalog import GpuModel
    from planner.config import Config

SORTS: tuple[str, ...] = ("tflops", "memory")
# The keys of the cheapest offer's record (``Offer.to_dict``) a model's value row shows; None without one.
OFFER_KEYS: tuple[str, ...] = (
    "provider",
    "region",
    "instance_type",
    "gpus_per_instance",
    "billing",
    "unit_price",
    "unit",
    "currency",
    "observed_at",
    "age_days",
    "from_snapshot",
    "source",
    "gpu_note",
)
DEFAULT_BILLING: tuple[str, ...] = (ON_DEMAND,)
PURCHASE_UNIT_CNY = Decimal(10_000)  # purchase figures are per 10,000 CNY
FIGURE = Decimal("0.0001")
# Why a model is not ranked. NO_OFFER is reworded with the filters ("no on_demand price at aliyun").
NO_OFFER = "no rental price"
VGPU_ONLY = "only vGPU slices are offered"
NO_PURCHASE = "no purchase price in the catalog"
NO_TFLOPS = "no dense TFLOPS figure in the catalog"


@dataclass(frozen=True)
class Purchase:
    """The catalog's purchase price of one card, in CNY; ``basis`` "cny" (a China price) or "usd"."""

    cny: Decimal
    basis: str
    date: str | None
    source: str | None
    obtained: str | None = None  # observed, estimate midpoint, list price (catalog.ListedPurchase)
    confidence: str | None = None


@dataclass(frozen=True)
class ValueRow:
    """One GPU model's value figures; ``rank`` is 0 for a model that is not ranked."""

    gpu_model: str
    china_variant: bool
    dense_tflops: float | None
    memory_gb: float
    offer: Offer | None
    tflops_per_cny_hour: Decimal | None
    memory_gb_per_cny_hour: Decimal | None
    purchase: Purchase | None = None
    tflops_per_10k_cny: Decimal | None = None
    memory_gb_per_10k_cny: Decimal | None = None
    rank: int = 0

    def to_dict(self, buy: bool = False) -> dict[str, Any]:
        o = self.offer
        said = o.to_dict() if o else {}
        out: dict[str, Any] = {
            "rank": self.rank,
            "gpu_model": self.gpu_model,
            "china_variant": self.china_variant,
            "dense_tflops": self.dense_tflops,
            "memory_gb": self.memory_gb,
            "cny_per_gpu_hour": o.cny_per_gpu_hour.quantize(FIGURE) if o else None,
            "cny_per_gpu_hour_basis": said.get("cny_per_gpu_hour_basis"),  # a list price, its billing mode
            "tflops_per_cny_hour": self.tflops_per_cny_hour,
            "memory_gb_per_cny_hour": self.memory_gb_per_cny_hour,
            **{key: said.get(key) for key in OFFER_KEYS},
            "sold_out": not o.availability.rentable if o else None,
            "stock_state": said.get("stock_state"),
        }
        if buy:
            p = self.purchase
            out |= {
                "purchase_price_cny": p.cny if p else None,
                "purchase_price_basis": p.basis if p else None,
                "purchase_price_date": p.date if p else None,
                "purchase_price_source": p.source if p else None,
                "purchase_price_obtained": p.obtained if p else None,
                "purchase_price_confidence": p.confidence if p else None,
                "tflops_per_10k_cny": self.tflops_per_10k_cny,
                "memory_gb_per_10k_cny": self.memory_gb_per_10k_cny,
            }
        return out


def value_columns(buy: bool = False) -> tuple[str, ...]:
    """The CSV columns of the ranking: a row's record keys, in its order (with ``buy``, the purchase's)."""
    return tuple(ValueRow("", False, None, 0.0, None, None, None).to_dict(buy))


@dataclass(frozen=True)
class ValueRanking:
    sort: str
    buy: bool
    billing: tuple[str, ...]
    providers: tuple[str, ...]
    ranked: tuple[ValueRow, ...]  # best value first
    not_ranked: tuple[LeftOut, ...]  # in catalog order
    variants_left_out: tuple[str, ...] = ()  # China variants that could be ranked, left out by choice
    scope: str = ALL
    # Per ranked model whose cheapest rentable offer outside ``scope`` costs less per GPU-hour, that offer.
    cheaper_outside: tuple[Offer, ...] = ()

    @property
    def as_of(self) -> dt.datetime | None:
        return max((r.offer.observed_at for r in self.ranked if r.offer), default=None)

    @property
    def from_snapshot(self) -> bool:
        return any(r.offer.from_snapshot for r in self.ranked if r.offer)

    @property
    def offers(self) -> list[Offer]:
        """The rental offers the ranking shows."""
        return [r.offer for r in self.ranked if r.offer]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sort": self.sort,
            "buy": self.buy,
            "billing": list(self.billing),
            "providers": list(self.providers),
            "scope": self.scope,
            "as_of": self.as_of,
            "from_snapshot": self.from_snapshot,
            "ranked": [r.to_dict(self.buy) for r in self.ranked],
            "not_ranked": [n.to_dict() for n in self.not_ranked],
            "variants_left_out": list(self.variants_left_out),
            "cheaper_outside_scope": [{"gpu_model": o.gpu_model} | o.to_dict() for o in self.cheaper_outside],
        }


def check_options(
    sort: str,
    providers: Iterable[str] = (),
    billing: Iterable[str] = (),
    scope: str | None = ALL,
    config: Config | None = None,
) -> tuple[str, OfferQuery]:
    """Refuse a bad sort, provider, billing mode or scope before any database work; returns the sort
    and the filter (on_demand when no billing mode is given; vGPU slices kept, to say why a model is
    not ranked). ``scope`` None (no ``--scope`` typed): ``[quote] scope`` of ``config``."""
    scope = chosen_scope(scope, config)
    query = OfferQuery.build((), tuple(providers), (), tuple(billing), vgpu=True, scope=scope)
    return check_sort(sort), replace(query, billing=query.billing or DEFAULT_BILLING)


@dataclass(frozen=True)
class ValueRequest:
    """What ``planner gpus --value`` ranks: the GPU models (and the China variants left out), the offers
    admitted, the sort and whether per purchase yuan."""

    models: tuple[GpuModel, ...]
    left_out: tuple[GpuModel, ...]
    offers: OfferQuery
    sort: str = "tflops"
    buy: bool = False

    @classmethod
    def from_flags(cls, given: Mapping[str, Any], config: Config) -> ValueRequest:
        """The request from the command line's values (``gpu``, ``include_variants``, ``sort``,
        ``providers``, ``billing``, ``scope``, ``buy``) and ``config`` (``[quote] scope``); a bad name
        is refused here, before the database opens."""
        sort, offers = check_options(
            given.get("sort") or "tflops", given.get("providers", ()), given.get("billing", ()),
            given.get("scope"), config,
        )  # fmt: skip
        gpu = given.get("gpu")
        chosen, left_out = models(
            OfferQuery.build([gpu] if gpu else [], include_variants=True), bool(given.get("include_variants"))
        )
        return cls(tuple(chosen), tuple(left_out), offers, sort, bool(given.get("buy")))

    def rank(self, conn: Connection, fx: Mapping[str, object]) -> ValueRanking:
        return value_ranking(
            conn, self.models, fx, self.offers, sort=self.sort, buy=self.buy, left_out=self.left_out
        )


def check_sort(sort: str) -> str:
    key = sort.strip().lower()
    if key not in SORTS:
        raise UnknownNameError("sort", sort, difflib.get_close_matches(key, SORTS, n=1, cutoff=0.5) or SORTS)
    return key


def value_ranking(
    conn: Connection,
    models: Sequence[GpuModel],
    fx: Mapping[str, object],
    query: OfferQuery | None = None,
    sort: str = "tflops",
    buy: bool = False,
    left_out: Sequence[GpuModel] = (),
) -> ValueRanking:
    """Rank ``models`` by TFLOPS (or GB, ``sort="memory"``) per CNY: per CNY-hour at the cheapest
    current rental price among the offers ``query`` admits (``check_options``: on-demand by default),
    or with ``buy`` per 10,000 CNY of purchase price (see the module rules).

    ``left_out`` (the China variants a caller does not rank) are priced in the same query only to
    name, in ``variants_left_out``, those that could have been ranked.
    """
    sort = check_sort(sort)
    query = query if query is not None else check_options(sort)[1]
    names, modes = query.providers, query.billing
    wanted = [m.name for m in models] + [m.name for m in left_out]
    vgpu_only: set[str] = set()
    inside, outside = offers_in_and_out_of_scope(
        conn, replace(query, gpu_models=tuple(wanted)), fx, stock=False
    )
    for offer in inside:
        if offer.is_vgpu:  # a vGPU slice is not a GPU
            vgpu_only.add(offer.gpu_model)
    cheapest = cheapest_by_model(conn, _priced(inside))
    priced_outside = {o.gpu_model for o in _priced(outside)}
    fx_usd = _usd_rate(fx)
    ranked: list[ValueRow] = []
    not_ranked: list[LeftOut] = []
    no_price = f"no {' or '.join(modes)} price" + (f" at {', '.join(names)}" if names else "")
    rows_of = {
        m.name: value_row(m, cheapest.get(m.name), purchase_price(m, fx_usd) if buy else None)
        for m in [*models, *left_out]
    }
    for model in models:
        row = rows_of[model.name]
        why = _not_ranked_reason(row, sort, buy)
        if why is None:
            ranked.append(row)
        else:
            if why == NO_OFFER and model.name in priced_outside:  # say where a price is
                why = Phrase(
                    "{no_price} in {where}; {scope} all ranks it",
                    no_price=no_price,
                    where=scope_words(query.scope),
                )
            elif why == NO_OFFER:
                why = VGPU_ONLY if model.name in vgpu_only else no_price
            not_ranked.append(LeftOut(model.name, why))
    ranked.sort(key=lambda r: _rank_key(r, sort, buy))
    could = [m.name for m in left_out if _not_ranked_reason(rows_of[m.name], sort, buy) is None]
    away = cheaper_outside_by_model(conn, cheapest, _priced(outside))
    cheaper = [away[r.gpu_model] for r in ranked if r.gpu_model in away]
    return ValueRanking(
        sort=sort,
        buy=buy,
        billing=modes,
        providers=names,
        ranked=tuple(replace(r, rank=i) for i, r in enumerate(ranked, 1)),
        not_ranked=tuple(not_ranked),
        variants_left_out=tuple(could),
        scope=query.scope,
        cheaper_outside=tuple(cheaper),
    )


def _priced(offers: Iterable[Offer]) -> list[Offer]:
    """Whole-GPU offers with a price: a vGPU slice is not a GPU, and a price that rounds to nothing
    says nothing."""
    return [o for o in offers if not o.is_vgpu and o.cny_per_gpu_hour.quantize(FIGURE) > 0]


def purchase_price(model: GpuModel, cny_per_usd: Decimal | None) -> Purchase | None:
    """The catalog's price of one card (``catalog.purchase_price``) in CNY, a US price at ``cny_per_usd``;
    None without a price, or for a US price without a rate."""
    listed = catalog.purchase_price(model)
    cny = listed.cny(cny_per_usd) if listed else None
    if listed is None or cny is None:
        return None
    return Purchase(cny, listed.basis, listed.date, listed.source, listed.obtained, listed.confidence)


def per_unit(figure: float | None, price: Decimal | None, unit: Decimal = Decimal(1)) -> Decimal | None:
    """``figure`` (TFLOPS or GB) per ``unit`` of ``price``, to four places; None when either is unknown."""
    if figure is None or price is None or price <= 0:
        return None
    return (Decimal(str(figure)) * unit / price).quantize(FIGURE)


def value_row(model: GpuModel, offer: Offer | None, purchase: Purchase | None) -> ValueRow:
    """A model's figures at this rental offer and purchase price (either may be None)."""
    rent = offer.cny_per_gpu_hour.quantize(FIGURE) if offer else None
    buy = purchase.cny if purchase else None
    return ValueRow(
        gpu_model=model.name,
        china_variant=bool(model.variant_of),
        dense_tflops=model.dense_tflops,
        memory_gb=model.memory_gb,
        offer=offer,
        tflops_per_cny_hour=per_unit(model.dense_tflops, rent),
        memory_gb_per_cny_hour=per_unit(model.memory_gb, rent),
        purchase=purchase,
        tflops_per_10k_cny=per_unit(model.dense_tflops, buy, PURCHASE_UNIT_CNY),
        memory_gb_per_10k_cny=per_unit(model.memory_gb, buy, PURCHASE_UNIT_CNY),
    )


def _not_ranked_reason(row: ValueRow, sort: str, buy: bool) -> str | None:
    """Why ``row`` cannot be ranked (``NO_OFFER``: no rental price), or None."""
    if buy and row.purchase is None:
        return NO_PURCHASE
    if not buy and row.offer is None:
        return NO_OFFER
    if sort == "tflops" and row.dense_tflops is None:
        return NO_TFLOPS
    return None


def _rank_key(row: ValueRow, sort: str, buy: bool) -> tuple:
    if buy:
        figure = row.tflops_per_10k_cny if sort == "tflops" else row.memory_gb_per_10k_cny
        price = row.purchase.cny if row.purchase else Decimal(0)
    else:
        figure = row.tflops_per_cny_hour if sort == "tflops" else row.memory_gb_per_cny_hour
        price = row.offer.cny_per_gpu_hour.quantize(FIGURE) if row.offer else Decimal(0)
    assert figure is not None
    return (-figure, price, row.gpu_model)


def _usd_rate(fx: Mapping[str, object]) -> Decimal | None:
    try:
        return fx_rate("USD", fx)
    except PriceRejected:
        return None
