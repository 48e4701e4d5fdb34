"""What every scraper yields and raises. Scrapers speak in the provider's own words; the pipeline
(``planner.ingest.normalize``) decides what a GPU is called and turns prices into CNY per GPU-hour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal


class ScrapeError(Exception):
    """A provider answered with something we cannot use: an unknown shape, an error code, a login page.

    Parsers raise this (and only this) on any payload they do not understand, so one provider's bad
    night becomes a readable failed run instead of a crash or silently wrong prices.
    """


@dataclass(frozen=True)
class RawOffer:
    """One price for one instance type and billing mode, as the provider states it.

    ``price`` is for one ``unit`` (hour, day, week, month, year) of either the whole instance
    (``per="instance"``) or one GPU (``per="gpu"``, AutoDL). ``billing`` is the provider's word for the
    mode or a canonical one (``on_demand``, ``spot``, ``daily``, ``weekly``, ``monthly``, ``yearly``).
    ``gpu_count`` is a float because vGPU slices are fractions (Tencent GN7.LARGE20 = 0.25).
    """

    provider: str
    region: str
    instance_type: str
    gpu_name: str
    gpu_count: float
    billing: str
    price: Decimal
    unit: str
    currency: str = "CNY"
    per: str = "instance"
    zone: str | None = None
    gpu_memory_gb: float | None = None
    vcpus: int | None = None
    memory_gb: float | None = None
    is_list_price: bool = True
    # Hourly tiers after the first, as (from_hour, price): Tencent's steps after vocab.TENCENT_TIER_HOURS.
    tiers: tuple[tuple[int, Decimal], ...] = ()
    # Availability where the provider says (scrapers.stock): "available", "low", "sold_out", "unknown"
    # (or None: not stated). AutoDL also gives how many GPUs are idle and how many can be ordered now.
    stock_status: str | None = None
    idle_gpus: int | None = None
    total_gpus: int | None = None
    orderable_gpus: int | None = None
    # A marketplace's counts above are summed over its machines; a job's GPUs must sit on one of them,
    # so it also states the most idle (and orderable) GPUs on any one machine. None: not stated.
    max_idle_gpus_per_machine: int | None = None
    max_orderable_gpus_per_machine: int | None = None
    source: str = ""
    # Set when the GPU model comes from a family table or documentation rather than from the source itself.
    gpu_note: str | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
