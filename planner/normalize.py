"""Normalisation, done once for every source (imports, the snapshot, every scraper): canonical GPU,
canonical billing mode, the price's unit, CNY per GPU-hour, and the sanity checks that refuse a price.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

from planner.billing import UNIT_OF_MODE, canonical_billing, hours_per_unit

HOME_CURRENCY = "CNY"
# Refuse anything above this per GPU-hour: the dearest list price we know (8x H800 bare metal) is under
# 150 CNY per GPU-hour, so 5,000 can only be a unit or parsing mistake.
MAX_CNY_PER_GPU_HOUR = Decimal(5000)
# A move larger than this factor since the last observation is flagged, not refused.
SUSPICIOUS_MOVE_FACTOR = Decimal(10)
MAX_GPUS_PER_INSTANCE = 64
SIX_PLACES = Decimal("0.000001")


class PriceRejected(ValueError):
    """A price that fails the sanity checks; the message says why."""


def parse_price(value: object) -> Decimal:
    """A positive, finite Decimal from a string or number; PriceRejected otherwise."""
    try:
        price = Decimal(str(value).strip().replace(",", ""))
    except (InvalidOperation, ValueError):
        raise PriceRejected(f"price {value!r} is not a number") from None
    if not price.is_finite():
        raise PriceRejected(f"price {value!r} is not a finite number")
    if price <= 0:
        raise PriceRejected(f"price {value!r} must be greater than zero")
    return price


def fx_rate(currency: str, fx: Mapping[str, object]) -> Decimal:
    """CNY per unit of ``currency`` from the [fx] settings; PriceRejected for an unknown currency."""
    code = currency.strip().upper()
    if code == HOME_CURRENCY:
        return Decimal(1)
    rate = fx.get(code)
    if not isinstance(rate, int | float) or isinstance(rate, bool) or rate <= 0:
        known = sorted([HOME_CURRENCY, *(k for k in fx if k.isupper() and len(k) == 3)])
        raise PriceRejected(f"currency {currency!r} has no rate in [fx] (known: {', '.join(known)})")
    return Decimal(str(rate))


def cny_per_gpu_hour(price: Decimal, currency_rate: Decimal, billing: str, gpu_count: float) -> Decimal:
    """What one GPU-hour costs at this price: price in CNY / hours in the billing unit / GPUs."""
    hours = Decimal(hours_per_unit(billing))
    value = price * currency_rate / hours / Decimal(str(gpu_count))
    if value > MAX_CNY_PER_GPU_HOUR:
        raise PriceRejected(
            f"price {price} per {UNIT_OF_MODE[billing]} is {value:.0f} CNY per GPU-hour, which is absurd"
        )
    return value.quantize(SIX_PLACES)


def check_gpu_count(value: object) -> float:
    try:
        count = float(str(value).strip())
    except ValueError:
        raise PriceRejected(f"gpu_count {value!r} is not a number") from None
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
