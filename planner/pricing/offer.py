"""The offer every command sees: one instance's latest price on one billing mode, with the provider's
last word on stock (``db.records.Stock``), and the one stock rule (``availability``).

A module of its own, apart from ``planner.pricing.cost``, so that ``planner.pricing.query`` and
``planner.pricing.tiers`` (which ``cost`` imports) can name ``Offer`` without importing ``cost`` back.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any

from db.records import STOCK_KEYS, Stock
from planner.billing import SPOT
from planner.money import per_gpu_hour
from planner.providers import MARKET_MACHINE_GPUS, MARKETPLACES
from vocab import StockStatus, gpu_hour_basis, iso_time

# --- availability -------------------------------------------------------------------------------


class Availability(StrEnum):
    """Whether an offer can be rented now for a job, from the provider's last refresh."""

    AVAILABLE = "available"  # the provider said so (or has enough idle GPUs)
    UNKNOWN = "unknown"  # the provider states no stock: counts as rentable
    SOLD_OUT = "sold_out"
    SHORT = "short"  # fewer idle GPUs than the job needs (in all, or on one marketplace machine)
    NOT_ORDERABLE = "not_orderable"  # idle, but fewer orderable GPUs than the job needs (AutoDL)
    # Its provider's latest refresh (or the newest source) did not list it (db.catalogue).
    NOT_LISTED = "not_listed"

    @property
    def rentable(self) -> bool:
        return self in (Availability.AVAILABLE, Availability.UNKNOWN)

    @property
    def words(self) -> str:
        """The state for a line of text: "sold out", "short of idle GPUs", "not orderable", ..."""
        return _WORDS[self]


# What quote, plan and their table say when no option can be rented: every unrentable state named.
NOTHING_RENTABLE = (
    "every option is sold out, short of idle GPUs, not orderable or not listed at its provider's last refresh"
)

_WORDS = {
    Availability.AVAILABLE: "available",
    Availability.UNKNOWN: "stock not stated",
    Availability.SOLD_OUT: "sold out",
    Availability.SHORT: "short of idle GPUs",
    Availability.NOT_ORDERABLE: "not orderable",
    Availability.NOT_LISTED: "not listed at the last refresh",
}


def availability(stock: Stock | None, gpus_needed: float, gpus_on_one_machine: float = 0) -> Availability:
    """The one stock rule: can ``gpus_needed`` GPUs be rented now, by what the provider last said?

    ``gpus_on_one_machine``: how many of them must be idle on one machine of a marketplace whose counts
    are summed over machines (``Offer.gpus_on_one_machine``; 0 where an instance is a machine). Judged
    against the most idle (orderable) GPUs on any one machine where the provider states it; where it
    does not, by the sums alone.
    """
    if stock is None:
        return Availability.UNKNOWN
    if stock.idle_gpus == 0:
        return Availability.SOLD_OUT
    if stock.idle_gpus is not None and stock.idle_gpus < gpus_needed:
        return Availability.SHORT
    most_idle, most_orderable = stock.max_idle_gpus_per_machine, stock.max_orderable_gpus_per_machine
    if most_idle is not None and most_idle < gpus_on_one_machine:
        return Availability.SHORT  # 40 idle over 20 machines is not 8 on one
    # Before the status: AutoDL's idle GPUs that take no order are stored as sold out (db.schema).
    if stock.orderable_gpus is not None and stock.orderable_gpus < gpus_needed:
        return Availability.NOT_ORDERABLE
    if most_orderable is not None and most_orderable < gpus_on_one_machine:
        return Availability.NOT_ORDERABLE
    if stock.stock_status == StockStatus.SOLD_OUT:
        return Availability.SOLD_OUT
    if stock.stock_status in (StockStatus.AVAILABLE, StockStatus.LOW) or stock.idle_gpus is not None:
        return Availability.AVAILABLE
    return Availability.UNKNOWN


# The stock record flattened into CSV columns: its keys, each prefixed with "stock_"
# (stock_stock_status is just stock_status).
STOCK_COLUMNS: tuple[str, ...] = tuple(
    key if key.startswith("stock_") else f"stock_{key}" for key in STOCK_KEYS
)


def stock_columns(stock: Stock | None) -> dict[str, object]:
    """``stock`` as ``STOCK_COLUMNS`` (all None when the provider said nothing), for a CSV row."""
    said = stock.to_dict() if stock else {}
    return {column: said.get(key) for column, key in zip(STOCK_COLUMNS, STOCK_KEYS, strict=True)}


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
    observed_at: dt.datetime  # when the price was last confirmed (a price's age counts from it)
    source: str | None
    from_snapshot: bool
    gpu_note: str | None = None
    china_variant: bool = False
    tiers: tuple[tuple[int, Decimal], ...] = ()  # hourly steps after the first: (from hour, price)
    median_unit_price: Decimal | None = None  # a marketplace's median listing (AutoDL)
    vcpus: int | None = None
    memory_gb: float | None = None
    stock: Stock | None = field(default=None, compare=False)
    first_seen_at: dt.datetime | None = None  # when this price was first seen (None: at observed_at)
    # When its provider was last seen not listing it (db.catalogue): never recommended then.
    unlisted_at: dt.datetime | None = None

    @property
    def cny_per_gpu_hour(self) -> Decimal:
        """The list price per GPU-hour, unrounded: a period's price over all its hours (730 a month),
        divided by the instance's GPUs; Tencent's first hourly tier."""
        return per_gpu_hour(self.unit_price * self.cny_per_currency, self.billing, self.gpus_per_instance)

    @property
    def availability(self) -> Availability:
        """Can one instance be rented now?"""
        if self.unlisted_at is not None:
            return Availability.NOT_LISTED
        return availability(self.stock, self.gpus_per_instance, self.gpus_on_one_machine(1))

    @property
    def unlisted_words(self) -> str | None:
        """ "not listed at the last refresh (2026-12-01)" for an offer its provider stopped listing."""
        if self.unlisted_at is None:
            return None
        return f"{Availability.NOT_LISTED.words} ({self.unlisted_at:%Y-%m-%d})"

    @property
    def per_gpu_listing(self) -> bool:
        """One GPU of a marketplace's shared machines (AutoDL): a job rents its GPUs one by one, from
        machines of up to ``MARKET_MACHINE_GPUS``."""
        return self.provider in MARKETPLACES and self.gpus_per_instance == 1

    def machines(self, instances: int) -> int:
        """Separate machines ``instances`` of this offer span: one each, or a marketplace's machines of
        up to ``MARKET_MACHINE_GPUS`` GPUs (the fewest that hold them)."""
        return math.ceil(instances / MARKET_MACHINE_GPUS) if self.per_gpu_listing else instances

    def gpus_on_one_machine(self, instances: int) -> int:
        """How many of ``instances`` per-GPU listings must be idle on one machine: spread evenly over
        ``machines``, the largest share (all of them up to ``MARKET_MACHINE_GPUS``; with 8 a machine: 8 of 16, 6 of 12). 0 for a cloud instance,
        whose stock counts instances that are each a machine."""
        if not self.per_gpu_listing or instances <= 0:
            return 0
        return math.ceil(instances / self.machines(instances))

    @property
    def interruptible(self) -> bool:
        return self.billing == SPOT

    @property
    def age_days(self) -> int:
        """Whole days since the price was last confirmed (UTC days; 0 for a price seen again today)."""
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
            "cny_per_gpu_hour_basis": gpu_hour_basis(self.billing),  # a list price (planner.pricing.headline)
            "observed_at": iso_time(self.observed_at),
            "first_seen_at": iso_time(self.first_seen_at or self.observed_at),
            "last_confirmed_at": iso_time(self.observed_at),
            "age_days": self.age_days,
            "unlisted_at": iso_time(self.unlisted_at) if self.unlisted_at else None,
            "source": self.source,
            "from_snapshot": self.from_snapshot,
            "china_variant": self.china_variant,
            "gpu_note": self.gpu_note,
            "interruptible": self.interruptible,
            "median_unit_price": self.median_unit_price,
            "availability": self.stock.to_dict() if self.stock else None,  # what the provider said
            "stock_state": self.availability.value,  # what that means for one instance
        }
