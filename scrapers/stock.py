"""Each provider's stock words mapped to ours, in one place: ``available``, ``low``, ``sold_out``, ``unknown``.

``unknown`` is what any value not in a table becomes (a new enum value is normal, not an error); the
pipeline stores it as no verdict (``availability.stock_status`` NULL). ``low`` means the provider says
stock is about to run out: rentable now, a warning beside the price.

Sources (field types and enum values as documented):

- Tencent ``InstanceTypeQuotaItem.Status`` (SELL | SOLD_OUT) and ``StatusCategory`` (EnoughStock |
  NormalStock | UnderStock | WithoutStock): tencentcloud-sdk-python-cvm 3.1.178, models.py.
- Aliyun ``SupportedResource.Status`` (Available | SoldOut) and ``StatusCategory`` (WithStock |
  ClosedWithStock | WithoutStock | ClosedWithoutStock): DescribeAvailableResource API doc (providers.md
  §2.1); the SDK (alibabacloud_ecs20140526 7.11.8) types both as plain ``str``.
- AutoDL machine/search ``gpu_idle_num`` and ``gpu_order_num`` (GPUs that can be ordered now): providers.md
  §4.1 (report 2026-08-06, gpuhunter docstrings). No stock word, counts only.
- Volcengine: the calculator's ``AvailableZone`` says where a type is sold, not what is in stock: unknown.
"""

from __future__ import annotations

from typing import Any

from vocab import StockStatus

Stock = StockStatus
STOCK_STATES: tuple[Stock, ...] = tuple(StockStatus)

TENCENT_STATUS: dict[str, Stock] = {"SELL": Stock.AVAILABLE, "SOLD_OUT": Stock.SOLD_OUT}
TENCENT_STATUS_CATEGORY: dict[str, Stock] = {
    "EnoughStock": Stock.AVAILABLE,
    "NormalStock": Stock.AVAILABLE,
    "UnderStock": Stock.LOW,
    "WithoutStock": Stock.SOLD_OUT,
}
ALIYUN_STATUS: dict[str, Stock] = {"Available": Stock.AVAILABLE, "SoldOut": Stock.SOLD_OUT}
# "Closed" = the type is no longer sold to new buyers there; WithStock/WithoutStock = stock left or not.
ALIYUN_STATUS_CATEGORY: dict[str, Stock] = {
    "WithStock": Stock.AVAILABLE,
    "ClosedWithStock": Stock.AVAILABLE,
    "WithoutStock": Stock.SOLD_OUT,
    "ClosedWithoutStock": Stock.SOLD_OUT,
}
# How a provider's pair of words combines: the worse of the two wins, so "Available" beside
# "WithoutStock" is sold out, and "SELL" beside "UnderStock" is low.
_RANK: dict[Stock, int] = {Stock.SOLD_OUT: 0, Stock.LOW: 1, Stock.AVAILABLE: 2}


def _worst(*states: Stock) -> Stock:
    known = [s for s in states if s != Stock.UNKNOWN]
    return min(known, key=_RANK.__getitem__) if known else Stock.UNKNOWN


def _word(table: dict[str, Stock], value: Any) -> Stock:
    return table.get(value, Stock.UNKNOWN) if isinstance(value, str) else Stock.UNKNOWN


def tencent_stock(status: Any, status_category: Any) -> Stock:
    """Tencent ``Status`` with ``StatusCategory``; either may be null or a value we do not know."""
    return _worst(_word(TENCENT_STATUS, status), _word(TENCENT_STATUS_CATEGORY, status_category))


def aliyun_stock(status: Any, status_category: Any) -> Stock:
    """Aliyun ``Status`` with ``StatusCategory``: ``Available`` + ``WithoutStock`` is sold out."""
    return _worst(_word(ALIYUN_STATUS, status), _word(ALIYUN_STATUS_CATEGORY, status_category))


def autodl_stock(orderable_gpus: int | None, idle_gpus: int | None) -> Stock:
    """AutoDL counts: orderable GPUs decide (idle but not orderable is sold out); without
    ``gpu_order_num`` the idle count decides, as before that field was read."""
    count = orderable_gpus if orderable_gpus is not None else idle_gpus
    if count is None:
        return Stock.UNKNOWN
    return Stock.AVAILABLE if count > 0 else Stock.SOLD_OUT


def best_of(states: list[Stock]) -> Stock:
    """One verdict for one type over several zones: the best zone decides (a job can go there)."""
    known = [s for s in states if s != Stock.UNKNOWN]
    return max(known, key=_RANK.__getitem__) if known else Stock.UNKNOWN
