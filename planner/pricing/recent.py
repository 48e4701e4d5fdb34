"""Recent prices: the unit price of one instance and billing mode over the days before its latest
observation, summarised as min / median / max and a trend. The quote engine, ``plan`` and ``tco`` all read
history through here, so "30-day median" and "trend" mean one thing everywhere.

Only ``db.queries`` is imported, and only when prices are read: ``planner quote`` loads this module on
every run, so it avoids ``statistics`` (and the ``fractions`` it pulls in) too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from planner.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection

HISTORY_DAYS = 30
MIN_OBSERVATIONS = 2  # one observation is a price, not a history
TREND_THRESHOLD = Decimal("0.02")  # a move under 2% over the window is "flat"
LATEST, MEDIAN, MIN = "latest", "median", "min"
PRICE_BASES: tuple[str, ...] = (LATEST, MEDIAN, MIN)


@dataclass(frozen=True)
class Recent:
    """The unit price of one instance and billing mode over the ``days`` before its latest observation."""

    days: int
    observations: int
    min: Decimal
    median: Decimal
    max: Decimal
    first: Decimal  # the oldest price in the window
    last: Decimal  # the latest price

    @property
    def trend(self) -> str:
        """``up``, ``down`` or ``flat``: the last price against the first of the window (±2%)."""
        change = (self.last - self.first) / self.first
        return "up" if change > TREND_THRESHOLD else "down" if change < -TREND_THRESHOLD else "flat"

    def price(self, basis: str) -> Decimal:
        """The unit price on ``basis``: the latest, the window's median or its minimum."""
        return {LATEST: self.last, MEDIAN: self.median, MIN: self.min}[basis]

    def to_dict(self) -> dict[str, Any]:
        """Every field, then the trend they imply (the JSON of ``quote``, ``plan`` and ``tco``)."""
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"trend": self.trend}


# The window flattened into CSV columns: its fields, each prefixed with "history_" (the trend has a
# column of its own).
HISTORY_COLUMNS: tuple[str, ...] = tuple(f"history_{f.name}" for f in fields(Recent))


def history_columns(recent: Recent | None) -> dict[str, Any]:
    """``recent`` as ``HISTORY_COLUMNS`` (all None without a history), for a CSV row."""
    return {f"history_{f.name}": getattr(recent, f.name) if recent else None for f in fields(Recent)}


class Observed(Protocol):
    """Anything priced on one day for one instance and billing mode (a latest price, a quote option)."""

    @property
    def instance_id(self) -> int: ...
    @property
    def billing(self) -> str: ...
    @property
    def observed_at(self) -> dt.datetime: ...


def check_basis(basis: str, given_by: str | None = None) -> str:
    """The basis, lower-cased; a one-line error naming where it came from (a config setting, say) and
    the choices otherwise. The command line offers only the choices (a click Choice)."""
    cleaned = basis.strip().lower()
    if cleaned not in PRICE_BASES:
        where = f"{given_by}: " if given_by else ""
        raise UsageError(f"{where}unknown price basis {basis!r}", f"choose one of {', '.join(PRICE_BASES)}")
    return cleaned


def summarise(values: Sequence[tuple[dt.date, Decimal]], last_day: dt.date, days: int) -> Recent | None:
    """The window ``[last_day - days, last_day]`` of (day, price) pairs, oldest first, or None when it
    holds fewer than two observations."""
    start = last_day - dt.timedelta(days=days)
    window = [price for day, price in values if start <= day <= last_day]
    if len(window) < MIN_OBSERVATIONS:
        return None
    return Recent(days, len(window), min(window), median(window), max(window), window[0], window[-1])


def recent_prices(
    conn: Connection, rows: Iterable[Observed], days: int = HISTORY_DAYS
) -> dict[tuple[int, str], Recent]:
    """Summaries for these (instance, billing) rows, each over the ``days`` before its own observation.

    One bounded query per distinct window start (after a nightly refresh, nearly always one): a single
    stale price must not pull years of history for all the others. Rows with fewer than two
    observations in their window get none."""
    rows = list(rows)
    if not rows or days <= 0:
        return {}
    from db import queries

    by_start: dict[dt.date, list[Observed]] = {}
    for row in rows:
        by_start.setdefault(row.observed_at.date() - dt.timedelta(days=days), []).append(row)
    seen: dict[tuple[int, str], list[tuple[dt.date, Decimal]]] = {}
    for since, group in by_start.items():
        found = queries.recent_prices(conn, [(r.instance_id, r.billing) for r in group], since)
        for key, values in found.items():
            seen.setdefault(key, values)
    out: dict[tuple[int, str], Recent] = {}
    for row in rows:
        key = (row.instance_id, row.billing)
        summary = summarise(seen.get(key, []), row.observed_at.date(), days)
        if summary is not None:
            out[key] = summary
    return out


def median(values: Sequence[Decimal]) -> Decimal:
    """statistics.median, exact on Decimals, without importing statistics."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
