"""Hourly tiers and the subscription break-even: pure arithmetic on a price that steps down after given
hours (Tencent: after ``vocab.TENCENT_TIER_HOURS``, like tax brackets). ``planner.pricing.cost`` costs jobs with it.

- ``tiers_of``: the tiers as stored (``prices.tiers``, as the ingest normaliser writes them);
- ``tier_uses`` / ``tiered_cost``: the cost of some hours on a tiered price, and the steps used;
- ``breakeven_hours``: the hours per month above which a monthly subscription beats the tiered
  on-demand price of the same instance.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from planner.pricing.offer import Offer


def tiers_of(text: str | None, scale: Decimal = Decimal(1)) -> list[tuple[int, Decimal]]:
    """Stored tiers ``[[from_hour, "price"], ...]``, each price times ``scale``."""
    if not text:
        return []
    return [(int(h), Decimal(str(p)) * scale) for h, p in json.loads(text)]


@dataclass(frozen=True)
class TierUse:
    """Hours ``from_hour`` to ``to_hour`` paid at ``unit_price`` (in the offer's currency)."""

    from_hour: Decimal
    to_hour: Decimal
    unit_price: Decimal

    def to_dict(self) -> dict[str, object]:
        return {"from_hour": self.from_hour, "to_hour": self.to_hour, "unit_price": self.unit_price}

    def __str__(self) -> str:
        return f"{_hours(self.from_hour)}-{_hours(self.to_hour)} h at {self.unit_price:,.2f}"


def _hours(value: Decimal) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def tier_uses(
    base_price: Decimal, tiers: Sequence[tuple[int, Decimal]], hours: Decimal
) -> tuple[Decimal, tuple[TierUse, ...]]:
    """Cost of ``hours`` at an hourly price that steps down after given hours (Tencent's ``TENCENT_TIER_HOURS``),
    and the steps used. ``tiers`` are (from_hour, price) for the steps after the first; each hour is
    paid at the step it falls in, like tax brackets."""
    bounds = [(Decimal(0), base_price)] + [(Decimal(h), p) for h, p in sorted(tiers)]
    total = Decimal(0)
    used = []
    for i, (start, price) in enumerate(bounds):
        if hours <= start:
            break
        end = min(hours, bounds[i + 1][0]) if i + 1 < len(bounds) else hours
        total += (end - start) * price
        used.append(TierUse(start, end, price))
    return total, tuple(used)


def tiered_cost(base_price: Decimal, tiers: Sequence[tuple[int, Decimal]], hours: Decimal) -> Decimal:
    """Cost of ``hours`` on a tiered hourly price (see ``tier_uses``)."""
    return tier_uses(base_price, tiers, hours)[0]


def breakeven_hours(hourly: Offer, monthly: Offer) -> Decimal | None:
    """Hours per month above which ``monthly`` (one instance) costs less than ``hourly`` on its tiered
    on-demand price: the ``h`` where the tiered cost of ``h`` hours equals the monthly price."""
    target = monthly.unit_price * monthly.cny_per_currency / hourly.cny_per_currency
    bounds = [(Decimal(0), hourly.unit_price)] + [(Decimal(h), p) for h, p in sorted(hourly.tiers)]
    spent = Decimal(0)
    for i, (start, price) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else None
        if price <= 0:
            continue
        if end is None or spent + (end - start) * price >= target:
            return (start + (target - spent) / price).quantize(Decimal("0.1"))
        spent += (end - start) * price
    return None
