"""Stock in our words (``available``, ``low``, ``sold_out``, ``unknown``) and the rules every provider's
mapping shares. Each provider module keeps its own words, with their sources, beside its parser
(``tencent_parse``, ``aliyun_api``, ``autodl``, ``ppio``, ``compshare``), so a new provider touches its
module only.

``unknown`` is what any value not in a table becomes (a new enum value is normal, not an error); the
pipeline stores it as no verdict (``availability.stock_status`` NULL). ``low`` means the provider says
stock is about to run out: rentable now, a warning beside the price. Volcengine: the calculator's
``AvailableZone`` says where a type is sold, not what is in stock: unknown.

A count of idle or orderable GPUs is a whole number from 0 up (``known_count``): a negative one, a
fraction, a boolean or a string is no count at all, so its stock is unknown, never sold out.
"""

from __future__ import annotations

from typing import Any

from vocab import StockStatus

Stock = StockStatus
STOCK_STATES: tuple[Stock, ...] = tuple(StockStatus)

# How a provider's pair of words combines: the worse of the two wins, so "Available" beside
# "WithoutStock" is sold out, and "SELL" beside "UnderStock" is low.
_RANK: dict[Stock, int] = {Stock.SOLD_OUT: 0, Stock.LOW: 1, Stock.AVAILABLE: 2}


def worst(*states: Stock) -> Stock:
    """The worse of a provider's words (``unknown`` ones aside)."""
    known = [s for s in states if s != Stock.UNKNOWN]
    return min(known, key=_RANK.__getitem__) if known else Stock.UNKNOWN


def word(table: dict[str, Stock], value: Any) -> Stock:
    """A provider's word through its table; anything else is ``unknown``."""
    return table.get(value, Stock.UNKNOWN) if isinstance(value, str) else Stock.UNKNOWN


MAX_COUNT = 10_000_000  # more GPUs than any provider has: junk


def known_count(value: Any) -> int | None:
    """A provider's count of GPUs, or None when it is not one (negative, fractional, a bool, text)."""
    return value if type(value) is int and 0 <= value <= MAX_COUNT else None


def from_count(count: Any) -> Stock:
    """GPUs that can be rented now: some is available, none is sold out, no count (or a count that is
    not one, such as -1) is unknown."""
    known = known_count(count)
    if known is None:
        return Stock.UNKNOWN
    return Stock.AVAILABLE if known > 0 else Stock.SOLD_OUT


def best_of(states: list[Stock]) -> Stock:
    """One verdict for one type over several zones: the best zone decides (a job can go there)."""
    known = [s for s in states if s != Stock.UNKNOWN]
    return max(known, key=_RANK.__getitem__) if known else Stock.UNKNOWN
