"""The records ``db`` takes and gives: what callers hand ``db.store`` and ``db.bulk`` and what they
answer, and :class:`Stock`, the stock a provider stated, as ``db.queries`` reads it and every command
judges it (``planner.pricing.offer.availability``).

Typed and immutable; field names carry their units. Kept apart from the writers and the queries (and
free of SQLAlchemy) so that neither writer imports the other for them, and the decision core can name
a stock record without loading the database code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

from vocab import iso_time

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
    already_present: int  # includes the confirmed ones
    changes: tuple[PriceChange, ...] = ()
    confirmed: int = 0  # prices seen again at the same value: their last confirmation moved on


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


# A stock record's keys, in the order its JSON record (and any stock_* columns) lists them.
STOCK_KEYS: tuple[str, ...] = (
    "stock_status",
    "idle_gpus",
    "total_gpus",
    "orderable_gpus",
    "max_idle_gpus_per_machine",
    "max_orderable_gpus_per_machine",
    "observed_at",
)


@dataclass(frozen=True)
class Stock:
    """What a provider last said about one instance and billing mode, and when: the one stock record.

    ``db.queries.latest_availability`` reads it, ``planner.pricing`` attaches it to an offer and judges
    it, and every JSON record writes it with :meth:`to_dict`.
    """

    stock_status: str | None  # available | low | sold_out | None (unknown is stored as None)
    idle_gpus: int | None
    total_gpus: int | None
    observed_at: dt.datetime  # naive UTC
    orderable_gpus: int | None = None  # GPUs that can be ordered now (AutoDL's gpu_order_num)
    # A marketplace (AutoDL) sums the counts above over its machines; a job's GPUs are rented on one of
    # them: the most idle (orderable) GPUs on any one machine. None where not stated (other providers,
    # stock stored before these were recorded).
    max_idle_gpus_per_machine: int | None = None
    max_orderable_gpus_per_machine: int | None = None

    @classmethod
    def of(cls, row: Any) -> Stock:
        """From a row of the ``availability`` table (or anything with its columns): the counts a row
        does not carry are None."""
        if isinstance(row, Stock):
            return row
        return cls(
            row.stock_status,
            row.idle_gpus,
            row.total_gpus,
            row.observed_at,
            getattr(row, "orderable_gpus", None),
            getattr(row, "max_idle_gpus_per_machine", None),
            getattr(row, "max_orderable_gpus_per_machine", None),
        )

    @property
    def rentable_gpus(self) -> int | None:
        """GPUs a renter can take now, where the provider counts them: the orderable ones where
        stated (AutoDL lists idle GPUs it takes no order for), else the idle ones."""
        return self.orderable_gpus if self.orderable_gpus is not None else self.idle_gpus

    def to_dict(self) -> dict[str, object]:
        """The JSON record: ``STOCK_KEYS`` in that order, the time as ISO 8601."""
        return {key: getattr(self, key) for key in STOCK_KEYS} | {"observed_at": iso_time(self.observed_at)}


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
    # The last sighting at this price, when the source knows one later than ``observed_at`` (an export);
    # and when the source says the provider stopped listing the offer (an export, the snapshot).
    confirmed_at: dt.datetime | None = None
    unlisted_at: dt.datetime | None = None


def as_date(value: object) -> dt.date:
    """A date as a query returned it: SQLite gives a function's result (max, coalesce) as text."""
    return dt.date.fromisoformat(value) if isinstance(value, str) else value  # type: ignore[return-value]


def as_datetime(value: object) -> dt.datetime:
    """A naive UTC datetime as a query returned it (text from a SQLite function's result)."""
    return dt.datetime.fromisoformat(value) if isinstance(value, str) else value  # type: ignore[return-value]


def as_decimal(value: object) -> Decimal:
    """A price column's own Decimal, or a SQLite aggregate's float read back through its text."""
    return value if isinstance(value, Decimal) else Decimal(str(value))


def chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    """``items`` in slices of at most ``size`` (an IN list or an executemany that stays bounded)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
