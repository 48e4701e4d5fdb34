"""The records of the write path: what callers hand ``db.store`` and ``db.bulk``, and what they answer.

Typed and immutable; field names carry their units. Kept apart from both writers so that neither
imports the other for them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

InstanceKey = tuple[str, str, str]  # provider, region, instance_type


@dataclass(frozen=True)
class InstanceRow:
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: float
    vcpus: int | None = None
    memory_gb: float | None = None
    gpu_note: str | None = None

    @property
    def key(self) -> InstanceKey:
        return (self.provider, self.region, self.instance_type)


@dataclass(frozen=True)
class PriceRow:
    instance: InstanceKey
    billing: str
    price: Decimal
    currency: str
    unit: str
    cny_per_gpu_hour: Decimal
    observed_at: dt.datetime  # naive UTC
    source: str | None = None
    tiers: str | None = None
    median_price: Decimal | None = None  # a marketplace's median listing (AutoDL); `price` is the cheapest


@dataclass(frozen=True)
class PriceChange:
    """A stored observation whose price differs from the latest earlier one of its instance and billing."""

    instance: InstanceKey
    billing: str
    before_day: dt.date
    before: Decimal
    after: Decimal


@dataclass(frozen=True)
class StoreCounts:
    stored: int
    changed: int
    already_present: int
    changes: tuple[PriceChange, ...] = ()


@dataclass(frozen=True)
class AvailabilityRow:
    """What a provider said about stock for one instance and billing mode at one run."""

    instance: InstanceKey
    billing: str
    observed_at: dt.datetime  # naive UTC
    stock_status: str | None  # available | low | sold_out | None
    idle_gpus: int | None = None
    total_gpus: int | None = None
    orderable_gpus: int | None = None  # AutoDL gpu_order_num; None where not stated
    # A marketplace's counts above are summed over machines: the most idle (orderable) on one machine.
    max_idle_gpus_per_machine: int | None = None
    max_orderable_gpus_per_machine: int | None = None


class PriceRecord(NamedTuple):
    """A checked price, the bulk form of :class:`PriceRow` (a file import builds a million of them: a
    NamedTuple costs no more than the plain tuple it is)."""

    instance: InstanceKey
    billing: str
    observed_at: dt.datetime  # naive UTC
    observed_on: dt.date  # observed_at's day: one observation per instance, billing mode and day
    price: Decimal
    currency: str
    unit: str
    cny_per_gpu_hour: Decimal
    source: str | None
    tiers: str | None
    median_price: Decimal | None


def chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    """``items`` in slices of at most ``size`` (an IN list or an executemany that stays bounded)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
