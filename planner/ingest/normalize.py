"""Normalisation, done once for every source (imports, the snapshot, every scraper): canonical GPU,
canonical billing mode, the price's unit, CNY per GPU-hour, and the sanity checks that refuse a price.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from planner import catalog
from planner.billing import HOURLY_MODES, UNIT_OF_MODE, canonical_billing
from planner.errors import UnknownNameError, UsageError
from planner.ingest.band import check_plausible
from planner.money import PriceRejected, fx_rate, per_gpu_hour
from planner.text import CONTROL, printable, without_invisible
from planner.units import parse_decimal
from vocab import EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED, STORED_STOCK_STATUSES, StockStatus

if TYPE_CHECKING:  # the type only: a quote must not import the scrapers (or requests)
    from scrapers.base import RawOffer

# Refuse anything above this per GPU-hour: the dearest list price we know (8x H800 bare metal) is under
# 150 CNY per GPU-hour, so 5,000 can only be a unit or parsing mistake.
MAX_CNY_PER_GPU_HOUR = Decimal(5000)
# A move larger than this factor since the last observation is flagged, not refused.
SUSPICIOUS_MOVE_FACTOR = Decimal(10)
MAX_GPUS_PER_INSTANCE = 64
SIX_PLACES = Decimal("0.000001")
# What the price columns hold (Numeric(18, 6)): a price must stay below this whatever the currency.
MAX_STORABLE_PRICE = Decimal(10) ** 12
MIN_STORABLE_PRICE = Decimal("0.000001")  # prices.price is NUMERIC(18, 6)
MAX_TIER_HOUR = 87_600  # ten years
MAX_COUNT = 10_000_000  # vCPUs, idle or total GPUs: anything larger is junk (and overflows an INTEGER)
# A name starting like a spreadsheet formula is no provider's identifier (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@")


def parse_price(value: object) -> Decimal:
    """A price as written in a file: a number (``planner.units.parse_decimal``) that ``check_price`` passes."""
    price = parse_decimal(value)
    if price is None:
        raise PriceRejected(f"price {str(value)[:30]!r} is not a number")
    return check_price(price, value)


def check_price(price: Decimal, written: object = None) -> Decimal:
    """The checks every price goes through, whoever sends it (a file, a provider, a tier of a price):
    finite, above zero, not rounding to zero at the six decimals stored, below what the column holds."""
    if isinstance(price, Decimal) and price.is_finite() and MIN_STORABLE_PRICE <= price < MAX_STORABLE_PRICE:
        return price
    shown = repr(str(price if written is None else written)[:30])
    if not isinstance(price, Decimal) or not price.is_finite():
        raise PriceRejected(f"price {shown} is not a finite number")
    if price <= 0:
        raise PriceRejected(f"price {shown} must be greater than zero (zero means not sold, never free)")
    if price < MIN_STORABLE_PRICE:
        raise PriceRejected(f"price {shown} rounds to zero at the six decimal places stored")
    raise PriceRejected(f"price {shown} is too large to be a price")


def cny_per_gpu_hour(
    price: Decimal, currency_rate: Decimal, billing: str, gpu_count: float, gpu_model: str
) -> Decimal:
    """What one GPU-hour costs at this price (``per_gpu_hour``), as stored: checked (not rounding to zero,
    not absurd, not under the floor of ``gpu_model``'s plausibility band, ``planner.ingest.band``) and
    to six places."""
    value = per_gpu_hour(price * currency_rate, billing, gpu_count)
    if value < SIX_PLACES / 2:  # stored as 0.000000: a free GPU that plan recommends and quote divides by
        raise PriceRejected(
            f"price {price:.6g} per {UNIT_OF_MODE[billing]} is {value:.3g} CNY per GPU-hour, "
            "which rounds to zero at the six decimal places stored"
        )
    if value > MAX_CNY_PER_GPU_HOUR:
        raise PriceRejected(
            f"price {price:.6g} per {UNIT_OF_MODE[billing]} is {value:,.0f} CNY per GPU-hour, which is absurd"
            if value < 10**12
            else f"price {price:.6g} per {UNIT_OF_MODE[billing]} is {value:.3g} CNY per GPU-hour, which is absurd"
        )
    check_plausible(gpu_model, value, f"price {price:.6g} per {UNIT_OF_MODE[billing]}")
    return value.quantize(SIX_PLACES)


def check_gpu_count(value: object) -> float:
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else parse_decimal(value)
    if number is None:
        raise PriceRejected(f"gpu_count {str(value)[:30]!r} is not a number")
    count = float(number)
    if not 0 < count <= MAX_GPUS_PER_INSTANCE:
        raise PriceRejected(f"gpu_count {value!r} must be above 0 and at most {MAX_GPUS_PER_INSTANCE}")
    return count


def billing_and_unit(value: str) -> tuple[str, str]:
    mode = canonical_billing(value)
    return mode, UNIT_OF_MODE[mode]


def is_suspicious_move(old: Decimal, new: Decimal) -> bool:
    """True when ``new`` is more than tenfold above or below ``old``."""
    if old <= 0 or new <= 0:
        return False
    return new / old > SUSPICIOUS_MOVE_FACTOR or old / new > SUSPICIOUS_MOVE_FACTOR


# --- Scraped offers -----------------------------------------------------------------------------------
#
# Every provider's RawOffers go through ``normalize_offers`` (planner.ingest.refresh calls it once per run):
#
# - GPU: ``catalog.canonical_name(raw name, memory)``. A name the catalog does not know, or a family name
#   with several sizes and no memory, is not stored: it is counted and named (``unknown_gpus``).
# - Per-GPU prices (``per="gpu"``, AutoDL) become whole-instance prices: price x GPU count. An AutoDL
#   "instance" is one GPU of a marketplace machine (GPU count 1, the per-GPU price), so a job of N GPUs
#   costs N of them, the same arithmetic as ceil(N/k) cloud instances of k GPUs, and CNY per GPU-hour
#   (instance price / hours in the unit / GPUs) compares AutoDL with per-instance cloud prices like for
#   like. (A multi-GPU job at AutoDL still needs those GPUs idle on one machine: see the idle counts.)
# - One price per instance and billing mode: the scrapers may yield several (Tencent per zone and list
#   next to discounted, Aliyun spot per zone). The cheapest is kept (what a renter pays); stock is merged
#   (available if any zone is). A discounted price says so in its source, with the list price.
# - A marketplace (AutoDL) yields the cheapest listing and a median one (``extra["stat"] == "median"``,
#   instance type "<GPU> (median)"): the median is folded into the cheapest offer as ``median_price``,
#   never stored as a rentable instance of its own, so a quote cannot count the same GPUs twice.
# - Refused (counted and named, never stored): zero, negative or absurd prices, prices under the GPU
#   model's plausibility band (``planner.ingest.band``), unknown billing modes or
#   currencies, a unit that is not the billing mode's, GPU counts outside (0, 64], oversized names, and
#   names with control characters or that begin like a spreadsheet formula (=, +, -, @).
# - Dropped (the price is kept, the fact left out): vCPUs, memory, idle and total GPUs that are not
#   whole/finite numbers in a sane range. Control characters in the source and note become spaces.

_LIST_NOTE = "discounted; list {list}"
_MEDIAN = "median"


@dataclass(frozen=True)
class NormalizedOffer:
    """One offer after normalisation: canonical GPU and billing, a whole-instance price, CNY per GPU-hour.

    ``price`` is what the whole instance costs for one ``unit`` of ``billing`` in ``currency``, as the
    provider quotes it (a monthly price stays monthly); ``cny_per_gpu_hour`` is derived for comparison.
    """

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: float
    billing: str
    unit: str
    price: Decimal
    currency: str
    cny_per_gpu_hour: Decimal
    source: str
    tiers: tuple[tuple[int, Decimal], ...] = ()
    is_list_price: bool = True
    vcpus: int | None = None
    memory_gb: float | None = None
    gpu_note: str | None = None
    stock_status: str | None = None
    idle_gpus: int | None = None
    total_gpus: int | None = None
    orderable_gpus: int | None = None
    max_idle_gpus_per_machine: int | None = None  # a marketplace's most idle GPUs on one machine
    max_orderable_gpus_per_machine: int | None = None
    median_price: Decimal | None = None

    @property
    def instance_key(self) -> tuple[str, str, str]:
        return (self.provider, self.region, self.instance_type)

    @property
    def tiers_json(self) -> str | None:
        """Tiers as stored in ``prices.tiers``: ``[[from_hour, "price"], ...]`` (read by planner.pricing.tiers.tiers_of)."""
        return json.dumps([[hour, str(price)] for hour, price in self.tiers]) if self.tiers else None

    @property
    def has_availability(self) -> bool:
        counts = (self.idle_gpus, self.total_gpus, self.orderable_gpus, *self.per_machine)
        return self.stock_status is not None or any(c is not None for c in counts)

    @property
    def per_machine(self) -> tuple[int | None, int | None]:
        """(most idle, most orderable) GPUs on any one machine, where a marketplace says."""
        return (self.max_idle_gpus_per_machine, self.max_orderable_gpus_per_machine)


@dataclass(frozen=True)
class Normalized:
    """The outcome of normalising one run's offers."""

    offers: tuple[NormalizedOffer, ...]
    # Raw GPU name -> offers not stored because the catalog does not know it (or it is ambiguous).
    unknown_gpus: dict[str, int] = field(default_factory=dict)
    # One line per refused offer: "<instance> <region> <billing>: <reason>".
    rejected: tuple[str, ...] = ()
    # Raw offers folded into another one (zones, list next to discounted, marketplace medians).
    merged: int = 0
    # Lines for the run's summary that cost no price (a GPU memory size of undocumented unit left out).
    notes: tuple[str, ...] = ()


def normalize_offers(raw_offers: Iterable[RawOffer], fx: Mapping[str, object]) -> Normalized:
    """Turn one run's RawOffers into stored-ready Offers (see the rules above); never raises on bad data."""
    unknown: dict[str, int] = {}
    rejected: list[str] = []
    groups: dict[tuple[str, str, str, str], list[tuple[NormalizedOffer, str | None]]] = {}
    medians: dict[tuple[str, str, str, str], Decimal] = {}
    identity: dict[tuple[str, str, str], tuple[str, float]] = {}
    model_of: dict[tuple[str, float | None], str] = {}
    warnings: dict[str, str] = {}
    sizes: dict[tuple[str, str], tuple[float | None, str | None]] = {}
    raw_list = list(raw_offers)
    for raw in raw_list:
        where = f"{raw.instance_type} {raw.region} {raw.billing}"
        size = raw.extra.get(EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED)
        if size is not None:
            raw = _with_checked_memory(raw, size, sizes, warnings)
        is_median = raw.extra.get("stat") == _MEDIAN
        try:
            name_key = (raw.gpu_name, raw.gpu_memory_gb)
            if name_key not in model_of:
                name = without_invisible(raw.gpu_name) if isinstance(raw.gpu_name, str) else raw.gpu_name
                model_of[name_key] = catalog.canonical_name(name, raw.gpu_memory_gb)
            gpu_model = model_of[name_key]
        except (UnknownNameError, UsageError) as err:
            if not is_median:
                label = raw.gpu_name if isinstance(err, UnknownNameError) else f"{raw.gpu_name} (ambiguous)"
                unknown[label] = unknown.get(label, 0) + 1
            continue
        try:
            offer = _offer(raw, gpu_model, fx)
        except (ValueError, TypeError, AttributeError, ArithmeticError) as err:  # PriceRejected, or junk
            if not is_median:
                rejected.append(f"{where}: {err}")
            continue
        if is_median:
            base = offer.instance_type.removesuffix(f" ({_MEDIAN})")
            medians[(offer.provider, offer.region, base, offer.billing)] = offer.price
            continue
        known = identity.setdefault(offer.instance_key, (offer.gpu_model, offer.gpu_count))
        if known != (offer.gpu_model, offer.gpu_count):
            rejected.append(
                f"{where}: {offer.gpu_count:g}x {offer.gpu_model} here, "
                f"{known[1]:g}x {known[0]} elsewhere in this run"
            )
            continue
        key = (*offer.instance_key, offer.billing)
        groups.setdefault(key, []).append((offer, raw.zone))
    offers = []
    for key, group in sorted(groups.items()):
        offer = _merge(group)
        if key in medians:
            offer = replace(offer, median_price=medians[key])
        offers.append(offer)
    merged = sum(len(g) - 1 for g in groups.values()) + len(medians)
    notes = tuple(warnings[k] for k in sorted(warnings))
    return Normalized(tuple(offers), dict(sorted(unknown.items())), tuple(rejected), merged, notes)


def _with_checked_memory(
    raw: RawOffer,
    size_text: str,
    seen: dict[tuple[str, str], tuple[float | None, str | None]],
    warnings: dict[str, str],
) -> RawOffer:
    """``raw`` with its undocumented memory size checked: GiB when it fits the model, else a note."""
    key = (raw.gpu_name, size_text)
    if key not in seen:
        try:
            size = float(size_text)
        except ValueError:
            size = math.nan
        seen[key] = (
            check_memory_size(raw.gpu_name, size)
            if math.isfinite(size) and size > 0
            else (None, f"memory size {size_text[:20]!r} is not a size: left out")
        )
    memory, note = seen[key]
    if note:
        warnings[f"{raw.provider} {raw.instance_type}"] = f"{raw.provider} {raw.instance_type}: {note}"
    return replace(raw, gpu_memory_gb=memory, gpu_note=note or raw.gpu_note)


def check_memory_size(product_name: str, size: float) -> tuple[float | None, str | None]:
    """A GPU memory size of undocumented unit in GiB, checked against the model's known memory; else a reason.

    Volcengine's ``Gpu.GpuDevices[].Memory.Size`` (``RawOffer.extra[EXTRA_GPU_MEMORY_SIZE_UNDOCUMENTED]``):
    the unit is not documented (volcenginesdk-ecs 5.0.54 types it ``int``, in the same ``Memory`` model
    whose instance-level ``Size`` is MiB). We read it as MiB only when that matches a memory size the
    GPU model comes in (24,576 MiB = 24 GiB for an A10, 49,152 MiB = 48 GiB for an L20); otherwise the
    size is left out and the reason says what it would match read as GB (48 for an L20), never guessed.
    """
    as_gib = size / 1024
    if _model_with_memory(product_name, as_gib):
        return as_gib, None
    if not _known_gpu(product_name):
        return (
            None,
            f"memory size {size:g} (unit undocumented) unchecked: {product_name} is not in the catalog",
        )
    as_gb = _model_with_memory(product_name, float(size))
    if as_gb:
        return None, (
            f"memory size {size:g} (unit undocumented) is no memory size of {product_name} read as MiB "
            f"({as_gib:g} GiB); read as GB it would be {as_gb}: left out, not guessed"
        )
    return None, f"memory size {size:g} matches no memory size of {product_name}, as MiB or as GB: left out"


def _model_with_memory(product_name: str, memory_gb: float) -> str | None:
    try:
        return catalog.canonical_name(product_name, memory_gb)
    except UsageError:  # UnknownNameError too: no size of that model fits
        return None


def _known_gpu(product_name: str) -> bool:
    try:
        catalog.canonical_name(product_name)
    except UnknownNameError:
        return False
    except UsageError:  # a known model that comes in several sizes
        return True
    return True


def _offer(raw: RawOffer, gpu_model: str, fx: Mapping[str, object]) -> NormalizedOffer:
    """One RawOffer with a known GPU as a NormalizedOffer; PriceRejected says why it cannot be."""
    region = check_name("region", raw.region, 64)
    instance_type = check_name("instance type", raw.instance_type, 128)
    try:
        billing, unit = billing_and_unit(raw.billing)
    except UnknownNameError:
        raise PriceRejected(f"billing mode {raw.billing!r} unknown") from None
    if raw.unit != unit:
        raise PriceRejected(f"price per {raw.unit!r}, but {billing} is priced per {unit}")
    count = check_gpu_count(raw.gpu_count)
    if raw.per not in ("instance", "gpu"):
        raise PriceRejected(f"price per {raw.per!r} (expected instance or gpu)")
    factor = Decimal(str(count)).normalize() if raw.per == "gpu" and count != 1 else Decimal(1)
    price = check_price(check_price(raw.price) * factor)
    currency = raw.currency.strip().upper()
    rate = fx_rate(currency, fx)
    cny = cny_per_gpu_hour(price, rate, billing, count, gpu_model)
    tiers: tuple[tuple[int, Decimal], ...] = ()
    if billing in HOURLY_MODES:
        tiers = tuple(
            sorted(
                check_tier(hour, p * factor, price, rate, billing, count, gpu_model) for hour, p in raw.tiers
            )
        )
    return NormalizedOffer(
        provider=raw.provider,
        region=region,
        instance_type=instance_type,
        gpu_model=gpu_model,
        gpu_count=count,
        billing=billing,
        unit=unit,
        price=price,
        currency=currency,
        cny_per_gpu_hour=cny,
        source=_plain(raw.source) or "",
        tiers=tiers,
        is_list_price=raw.is_list_price,
        vcpus=_count(raw.vcpus),
        memory_gb=_size(raw.memory_gb),
        gpu_note=_plain(raw.gpu_note),
        # "unknown" (and anything else) is stored as no verdict; scrapers.stock maps provider words.
        stock_status=raw.stock_status if raw.stock_status in STORED_STOCK_STATUSES else None,
        idle_gpus=_count(raw.idle_gpus),
        orderable_gpus=_count(raw.orderable_gpus),
        total_gpus=_count(raw.total_gpus),
        max_idle_gpus_per_machine=_count(raw.max_idle_gpus_per_machine),
        max_orderable_gpus_per_machine=_count(raw.max_orderable_gpus_per_machine),
    )


def check_name(label: str, value: object, limit: int) -> str:
    """A region or instance type as a provider names it, without invisible characters (``RTX 4090`` and
    ``RTX 4090`` + a zero-width space are one instance); PriceRejected for anything else."""
    if isinstance(value, str):
        value = without_invisible(value).strip()
    if not isinstance(value, str) or not value or len(value) > limit:
        raise PriceRejected(f"{label} {str(value)[:40]!r} is empty or longer than {limit} characters")
    if CONTROL.search(value):
        raise PriceRejected(f"{label} {value[:40]!r} has a control character")
    if value.startswith(_FORMULA_START):
        raise PriceRejected(
            f"{label} {value[:40]!r} begins like a formula (=, +, -, @) a spreadsheet would run"
        )
    return value


def _plain(text: object) -> str | None:
    return printable(text) if isinstance(text, str) and text else None


def _count(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT
    return value if ok else None  # type: ignore[return-value]


def _size(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and 0 <= value < 1e7 else None


def _tier_hour(hour: object) -> int:
    if isinstance(hour, bool) or not isinstance(hour, int) or not 0 < hour <= MAX_TIER_HOUR:
        raise PriceRejected(f"tier from hour {str(hour)[:20]!r} is not an hour")
    return hour


def check_tier(
    hour: object, price: Decimal, base: Decimal, rate: Decimal, billing: str, gpu_count: float, gpu_model: str
) -> tuple[int, Decimal]:
    """One step of a tiered hourly price (Tencent: cheaper after ``vocab.TENCENT_TIER_HOURS``), through the checks
    of any price, and not more than tenfold away from the base price it steps down from."""
    check_price(price)
    cny_per_gpu_hour(price, rate, billing, gpu_count, gpu_model)
    if is_suspicious_move(base, price):
        raise PriceRejected(
            f"tier price {price:.6g} from hour {hour} is more than tenfold away from {base:.6g}"
        )
    return _tier_hour(hour), price


def _merge(group: list[tuple[NormalizedOffer, str | None]]) -> NormalizedOffer:
    """One offer per instance and billing mode: the cheapest, with stock merged over zones."""
    best = min((o for o, _ in group), key=lambda o: (o.price, not o.is_list_price))
    statuses = {o.stock_status for o, _ in group}
    if StockStatus.AVAILABLE in statuses:
        stock: str | None = StockStatus.AVAILABLE  # one zone with stock is enough: the job can go there
    elif StockStatus.LOW in statuses:
        stock = StockStatus.LOW
    elif statuses == {StockStatus.SOLD_OUT}:
        stock = StockStatus.SOLD_OUT
    else:
        stock = None
    counts: dict[str | None, tuple[int | None, ...]] = {}
    for offer, zone in group:
        said = (offer.idle_gpus, offer.total_gpus, offer.orderable_gpus, *offer.per_machine)
        if any(c is not None for c in said):
            counts.setdefault(zone, said)
    idle = _sum_known(c[0] for c in counts.values())
    total = _sum_known(c[1] for c in counts.values())
    orderable = _sum_known(c[2] for c in counts.values())
    # Zones are summed, but no machine spans two: the most on one machine is the most of any zone.
    most_idle = _max_known(c[3] for c in counts.values())
    most_orderable = _max_known(c[4] for c in counts.values())
    source = best.source
    if not best.is_list_price:
        listed = [o.price for o, _ in group if o.is_list_price]
        if listed:
            source = f"{source} ({_LIST_NOTE.format(list=min(listed))})"
    return replace(
        best,
        stock_status=stock,
        idle_gpus=idle,
        total_gpus=total,
        orderable_gpus=orderable,
        max_idle_gpus_per_machine=most_idle,
        max_orderable_gpus_per_machine=most_orderable,
        source=source,
    )


def _sum_known(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _max_known(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None
