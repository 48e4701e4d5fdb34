"""Money: what one GPU-hour costs at a price, and CNY per unit of another currency.

A leaf (it imports only ``planner.billing`` and ``vocab``) because two sides need the same arithmetic:
the ingest code stores CNY per GPU-hour with every price, and the decision core (``planner.pricing``)
recomputes it, unrounded, from the price it costs a job at. With the formula here, neither imports
the other, and the stored figure and the decided one cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from planner.billing import hours_per_unit

HOME_CURRENCY = "CNY"


class PriceRejected(ValueError):
    """A price that fails the sanity checks; the message says why."""


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


def per_gpu_hour(price_cny: Decimal, billing: str, gpu_count: float) -> Decimal:
    """What one GPU-hour costs at a price in CNY per instance and billing unit, unrounded: the price
    over the hours of its unit (730 a month), over the instance's GPUs. The one such formula: the
    stored figure (``planner.ingest.normalize.cny_per_gpu_hour``) and the decided one
    (``planner.pricing.offer.Offer.cny_per_gpu_hour``) both use it."""
    return price_cny / Decimal(hours_per_unit(billing)) / Decimal(str(gpu_count))
