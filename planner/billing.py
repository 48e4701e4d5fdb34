"""Billing modes as people spell them, and the days a paid period covers (the words are in ``vocab``).

A price is always "per one unit of its billing mode": ``on_demand`` and ``spot`` per hour, ``daily``
per day, and so on. ``HOURS_PER_MONTH`` (730 = 8760 / 12) turns a monthly price into an hourly
equivalent for comparison; the days a subscription period *covers* (``DAYS_PER_PERIOD``) are what a
job spread over calendar days must pay for.
"""

from __future__ import annotations

import difflib

from planner.errors import UnknownNameError
from vocab import (
    HOURS_PER_DAY,
    HOURS_PER_MONTH,
    HOURS_PER_UNIT,
    HOURS_PER_WEEK,
    HOURS_PER_YEAR,
    UNIT_OF_MODE,
    BillingMode,
)

# Plain strings (the enum's values): the import binds one per row, and the database driver takes a
# plain str without asking whether it needs adapting.
ON_DEMAND: str = BillingMode.ON_DEMAND.value
SPOT: str = BillingMode.SPOT.value
DAILY: str = BillingMode.DAILY.value
WEEKLY: str = BillingMode.WEEKLY.value
MONTHLY: str = BillingMode.MONTHLY.value
YEARLY: str = BillingMode.YEARLY.value

BILLING_MODES: tuple[str, ...] = tuple(m.value for m in BillingMode)
SUBSCRIPTION_MODES: tuple[str, ...] = (DAILY, WEEKLY, MONTHLY, YEARLY)
HOURLY_MODES: tuple[str, ...] = (ON_DEMAND, SPOT)
__all__ = [
    "BILLING_MODES",
    "HOURS_PER_DAY",
    "HOURS_PER_MONTH",
    "HOURS_PER_UNIT",
    "HOURS_PER_WEEK",
    "HOURS_PER_YEAR",
    "UNIT_OF_MODE",
    "BillingMode",
    "canonical_billing",
    "hours_per_unit",
]

# Calendar days one paid period covers. A month is counted as 30 days: a job spread over 31 days
# needs two monthly periods, which is what a subscription bought on day 1 would cost.
DAYS_PER_PERIOD: dict[str, int] = {DAILY: 1, WEEKLY: 7, MONTHLY: 30, YEARLY: 365}

# What providers and people call the modes, lower-cased.
_ALIASES: dict[str, str] = {
    "on_demand": ON_DEMAND,
    "on-demand": ON_DEMAND,
    "ondemand": ON_DEMAND,
    "payg": ON_DEMAND,
    "pay-as-you-go": ON_DEMAND,
    "hourly": ON_DEMAND,
    "postpaid": ON_DEMAND,
    "postpaid_by_hour": ON_DEMAND,
    "按量": ON_DEMAND,
    "按量计费": ON_DEMAND,
    "按量付费": ON_DEMAND,
    "按需": ON_DEMAND,
    "spot": SPOT,
    "spotpaid": SPOT,
    "preemptible": SPOT,
    "竞价": SPOT,
    "竞价实例": SPOT,
    "抢占式实例": SPOT,
    "daily": DAILY,
    "day": DAILY,
    "包日": DAILY,
    "weekly": WEEKLY,
    "week": WEEKLY,
    "包周": WEEKLY,
    "monthly": MONTHLY,
    "month": MONTHLY,
    "包月": MONTHLY,
    "yearly": YEARLY,
    "year": YEARLY,
    "annual": YEARLY,
    "包年": YEARLY,
}


def canonical_billing(name: str) -> str:
    """Return the canonical billing mode for ``name`` (``payg`` -> ``on_demand``) or raise UnknownNameError."""
    key = name.strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(_ALIASES), n=3, cutoff=0.6)
    suggestions = sorted({_ALIASES[c] for c in close}) or list(BILLING_MODES)
    raise UnknownNameError("billing mode", name, suggestions)


def hours_per_unit(mode: str) -> int:
    """Hours in one paid unit of a canonical billing mode (730 for ``monthly``)."""
    return HOURS_PER_UNIT[UNIT_OF_MODE[mode]]
