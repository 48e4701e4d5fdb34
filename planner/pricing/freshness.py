"""How old the prices a command shows are, said the same way by ``quote``, ``plan`` and ``gpus --value``.

- ``prices_line``: the header: the days the shown offers were priced and how many of them come from
  the bundled snapshot (only those: imported and refreshed prices are never called the snapshot);
- ``age_cell``: a table cell with the offer's age in days, marked "(old)" past ``OLD_DAYS``;
- ``stale_warning``: a sentence for a recommendation line when its price is over ``STALE_DAYS`` old;
- ``age_legend``: the legend line of the "(old)" mark, when a table shows one.

Pure text from ``planner.pricing.cost.Offer`` records (their ``observed_at``, ``age_days`` and
``from_snapshot``); no database.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from planner.pricing.cost import Offer

OLD_DAYS = 90  # a price older than this is marked in the tables
STALE_DAYS = 365  # a recommendation on a price older than this is warned about
OLD_MARK = " (old)"
REFRESH_HINT = "run `planner refresh` for today's prices"


def prices_line(offers: Sequence[Offer]) -> str:
    """``Prices observed 2024-10-09 to 2026-09-24; 3 of 10 from the bundled snapshot: run `planner
    refresh` for today's prices.`` for the offers shown ("" when there are none)."""
    if not offers:
        return ""
    days = [o.observed_at.date() for o in offers]
    first, last = min(days), max(days)
    line = f"Prices observed {first:%Y-%m-%d}" + ("" if first == last else f" to {last:%Y-%m-%d}")
    snapshot = sum(o.from_snapshot for o in offers)
    if snapshot:
        everyone = "all" if snapshot == len(offers) else f"{snapshot} of {len(offers)}"
        line += f"; {everyone} from the bundled snapshot: {REFRESH_HINT}"
    return line + "."


def is_old(offer: Offer) -> bool:
    return offer.age_days > OLD_DAYS


def age_cell(offer: Offer) -> str:
    """``12 d``, or ``400 d (old)`` past ``OLD_DAYS``."""
    return f"{offer.age_days:,} d" + (OLD_MARK if is_old(offer) else "")


def age_legend(offers: Sequence[Offer]) -> list[str]:
    """The legend of the "(old)" mark, as a one-line list when some shown offer carries it."""
    if not any(is_old(o) for o in offers):
        return []
    return [
        f"age: days since the price was last seen (first seen or confirmed); (old): more than {OLD_DAYS} days, prices may have "
        f"moved since: {REFRESH_HINT}, or check the provider's site."
    ]


def stale_warning(offer: Offer) -> str:
    """`` Warning: its price is 783 days old (observed 2024-10-09): ...`` past ``STALE_DAYS``, else ""."""
    if offer.age_days <= STALE_DAYS:
        return ""
    return (
        f" Warning: its price is {offer.age_days:,} days old (observed {offer.observed_at:%Y-%m-%d}) "
        "and may no longer hold."
    )
