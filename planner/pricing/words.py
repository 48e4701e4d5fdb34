"""The sentences that state the pricing rules, each built from the constant it cites, for the views'
notes and the commands' ``--help``: change a rule's number and every sentence that names it follows.

- ``TIE_RULE`` (``TIE_SENTENCE``, on its own): near-equal totals go to fewer machines
  (``planner.pricing.rank.TIE_SHARE``, ``TIE_CNY``);
- ``TIERS_NOTE``: Tencent's hourly tiers (``vocab.TENCENT_TIER_HOURS``);
- ``MARKET_STOCK_NOTE``, ``ONE_MACHINE_NOTE``: a marketplace's idle GPUs, summed over machines of up
  to ``vocab.MARKET_MACHINE_GPUS`` GPUs, and a job's GPUs on one of them;
- ``MARKET_PRICE_NOTE`` / ``MARKETPLACE_NOTE``: a marketplace's price is its cheapest listing for one GPU
  (the providers with ``marketplace`` set in ``vocab.PROVIDER_TABLE``).

And a provider's stock, judged by ``planner.pricing.offer.availability`` and named by
``Availability.words``: ``stock_words`` for a table cell (quote, prices), ``stock_state_words`` for a
sentence (quote's recommendation), ``stock_brief`` for an alert message.
"""

from __future__ import annotations

from decimal import Decimal

from planner.pricing.offer import Availability, Stock, availability
from planner.pricing.rank import TIE_CNY, TIE_SHARE
from vocab import MARKET_MACHINE_GPUS, TENCENT_TIER_HOURS
from vocab.words import ENGLISH, named, say, word


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
ONE_MACHINE_NOTE = (
    f"a marketplace's (AutoDL) GPUs rented together on one of its machines (up to {MARKET_MACHINE_GPUS}), "
    "which needs that many idle on one machine."
)
MARKET_STOCK_NOTE = (
    "'stock' is what the provider said at its last refresh; AutoDL's idle GPUs are summed over "
    f"machines of up to {MARKET_MACHINE_GPUS} GPUs ('≤3 on one machine': the most idle on any one of "
    "them), and a multi-GPU job needs its GPUs idle on one machine. Options that cannot be rented now "
    "are listed last and never recommended."
)


def stock_words(stock: Stock | None, needed: float = 1, on_one_machine: float = 0) -> str:
    """A table cell: "idle now 3/32", "sold out", "available" or "-" ("<8 needed" when short,
    "not orderable" when idle GPUs cannot be ordered), judged by ``availability`` for ``needed`` GPUs,
    ``on_one_machine`` of them on one marketplace machine. Where a marketplace states the most idle GPUs
    on any one machine, the cell says so: "idle 40/480, ≤2 on one machine"."""
    if stock is None:
        return "-"
    said = Stock.of(stock)
    state = availability(said, needed, on_one_machine)
    idle, most = said.idle_gpus, said.max_idle_gpus_per_machine
    total = f"/{said.total_gpus}" if said.total_gpus is not None else ""
    if state is Availability.SOLD_OUT:
        return f"{state.words} (0{total} idle)" if idle == 0 else state.words
    if state is Availability.NOT_ORDERABLE:
        most_orderable, orderable = said.max_orderable_gpus_per_machine, said.orderable_gpus
        if most_orderable is not None and (orderable is None or orderable >= needed):
            return f"idle {idle}{total}, ≤{most_orderable} orderable on one machine"
        return f"idle {idle}{total}, {state.words}"
    if idle is not None:
        wanted = needed if idle < needed else on_one_machine  # short in all, or on any one machine
        short = f" (<{wanted:g} needed)" if state is Availability.SHORT else ""
        if most is not None:
            return f"idle {idle}{total}, ≤{most} on one machine{short}"
        return f"idle now {idle}{total}{short}"
    return state.words if state is Availability.AVAILABLE else "-"


def stock_state_words(stock: Stock | None, needed: float = 1, on_one_machine: float = 0) -> str:
    """The stock in a sentence: "available at the last refresh", "sold out (0/32 idle) at the last
    refresh", "stock not stated by the provider"."""
    if availability(stock, needed, on_one_machine) is Availability.UNKNOWN:
        return f"{Availability.UNKNOWN.words} by the provider"
    return f"{stock_words(stock, needed, on_one_machine)} at the last refresh"


def stock_brief(stock: Stock | None, state: Availability, lang: str = ENGLISH) -> str:
    """An alert message's stock: ``12/80 idle``, ``12/80 idle, at most 3 on one machine``, ``sold out``,
    the provider's status or ``-``; ``state`` is the offer's availability for one instance. ``lang``
    "zh": ``空闲 12/80``, ``售罄``."""
    if stock is None:
        return "-"
    if stock.idle_gpus is not None and stock.total_gpus:
        idle = say("alert.idle_of", lang, idle=stock.idle_gpus, total=stock.total_gpus)
        return idle + per_machine_words(stock, lang)
    if state is Availability.SOLD_OUT:
        return state.words if lang == ENGLISH else word("stock", "sold_out", lang)
    if not stock.stock_status:
        return "-"
    return named("stock", stock.stock_status, lang)


def per_machine_words(stock: Stock | None, lang: str = ENGLISH) -> str:
    """``, at most 2 on one machine`` where a marketplace states it (its idle GPUs are summed over
    machines): the most orderable GPUs on one machine, else the most idle; else empty."""
    if stock is None:
        return ""
    most = stock.max_orderable_gpus_per_machine
    if most is None:
        most = stock.max_idle_gpus_per_machine
    return "" if most is None else say("alert.per_machine", lang, most=most)
