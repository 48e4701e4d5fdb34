"""The sentences that state the pricing rules, each built from the constant it cites, for the views'
notes and the commands' ``--help``: change a rule's number and every sentence that names it follows.

- ``TIE_RULE`` (``TIE_SENTENCE``, on its own): near-equal totals go to fewer machines (``planner.pricing.rank.TIE_SHARE``, ``TIE_CNY``);
- ``TIERS_NOTE``: Tencent's hourly tiers (``vocab.TENCENT_TIER_HOURS``);
- ``MARKET_STOCK_NOTE``: a marketplace's idle GPUs, summed over machines of up to
  ``vocab.MARKET_MACHINE_GPUS`` GPUs;
- ``MARKET_PRICE_NOTE`` / ``MARKETPLACE_NOTE``: a marketplace's price is its cheapest listing for one GPU
  (the providers with ``marketplace`` set in ``vocab.PROVIDER_TABLE``).
"""

from __future__ import annotations

from decimal import Decimal

from planner.pricing.rank import TIE_CNY, TIE_SHARE
from vocab import MARKET_MACHINE_GPUS, TENCENT_TIER_HOURS


def _number(value: Decimal) -> str:
    """``Decimal("0.500")`` -> ``0.5``, ``Decimal(1)`` -> ``1``: a rule's number as a sentence writes it."""
    return format(value.normalize(), "f")


def _and(items: list[str]) -> str:
    """``["96", "360"]`` -> ``96 and 360``; three or more: ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# Totals this close are a tie (``planner.pricing.rank.is_tie``).
TIE_RULE = (
    f"totals within {_number(TIE_SHARE * 100)}% (or {_number(TIE_CNY)} CNY) go to fewer machines, "
    "then the wider NVLink"
)
TIE_SENTENCE = f"{TIE_RULE[0].upper()}{TIE_RULE[1:]}."
TIERS_NOTE = (
    "hourly tiers applied (Tencent: the price steps down after "
    f"{_and([str(h) for h in TENCENT_TIER_HOURS])} hours)"
)
MARKET_PRICE_NOTE = "A marketplace price (AutoDL) is the cheapest listing for one GPU"
MARKETPLACE_NOTE = "AutoDL is a marketplace: its price is the cheapest listing for one GPU."
MARKET_STOCK_NOTE = (
    "'stock' is what the provider said at its last refresh; AutoDL's idle GPUs are summed over "
    f"machines of up to {MARKET_MACHINE_GPUS} GPUs ('≤3 on one machine': the most idle on any one of "
    "them), and a multi-GPU job needs its GPUs idle on one machine. Options that cannot be rented now "
    "are listed last and never recommended."
)
