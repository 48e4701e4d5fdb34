"""How one GPU model's prices and availability changed, day by day (``planner history``), as records.

``price_history(engine, query, days, today)`` returns a :class:`History`: one row per day, provider, GPU
model and billing mode, over a :class:`Window` of ``days`` that ends today, or at the newest price when
there is none today (the bundled snapshot), so old data is shown, not hidden. Only the regions in the
query's scope count (``planner.pricing.query``, as in quote); the regions left out are named.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.engine import Engine

from planner.pricing.cost import OfferQuery
from planner.pricing.query import ALL, chosen_scope, within

if TYPE_CHECKING:  # pragma: no cover
    from planner.config import Config

# A history day's stock, as its CSV and JSON columns: counted over the instances of the day.
DAY_STOCK_KEYS = ("instances_with_stock", "sold_out", "idle_gpus", "total_gpus", "max_idle_gpus_per_machine")


class HistoryDay(Protocol):
    """One day of one GPU model at one provider and billing mode, as the views read it (``db.queries``
    returns ``HistoryRow`` records of this shape; the views, which never import the database, name it
    by this)."""

    @property
    def day(self) -> dt.date: ...
    @property
    def provider(self) -> str: ...
    @property
    def gpu_model(self) -> str: ...
    @property
    def billing(self) -> str: ...
    @property
    def instances(self) -> int: ...
    @property
    def min_cny_per_gpu_hour(self) -> Decimal: ...
    @property
    def max_cny_per_gpu_hour(self) -> Decimal: ...
    @property
    def median_cny_per_gpu_hour(self) -> Decimal | None: ...
    @property
    def stock_known(self) -> int: ...
    @property
    def sold_out(self) -> int: ...
    @property
    def idle_gpus(self) -> int | None: ...
    @property
    def total_gpus(self) -> int | None: ...
    @property
    def max_idle_gpus_per_machine(self) -> int | None: ...
    @property
    def change_percent(self) -> Decimal | None: ...
    @property
    def set_changed(self) -> bool: ...


@dataclass(frozen=True)
class Window:
    """The days shown: ``days`` of them up to ``until``, which is today, or the newest price's day
    (``early``) when there is none today, so old data (the bundled snapshot) is shown, not hidden."""

    days: int
    until: dt.date
    today: dt.date

    @classmethod
    def ending(cls, today: dt.date, newest: dt.date | None, days: int) -> Window:
        return cls(days, newest if newest is not None and newest < today else today, today)

    @property
    def since(self) -> dt.date:
        return self.until - dt.timedelta(days=self.days - 1)

    @property
    def early(self) -> bool:
        return self.until < self.today

    @property
    def text(self) -> str:
        """ "the last 30 day(s)", or "the 30 day(s) to 2026-10-05" when it ends before today."""
        return f"the {self.days} day(s) to {self.until}" if self.early else f"the last {self.days} day(s)"

    def note(self) -> str:
        ago = (self.today - self.until).days
        return (
            f"No price since {self.until} ({ago} day(s) ago): the window ends at the newest price, "
            "not today. `planner refresh` brings today's prices."
        )


@dataclass(frozen=True)
class History:
    """The rows of the GPU models asked for, over ``window``."""

    gpu: str
    gpu_models: list[str]
    window: Window
    rows: Sequence[HistoryDay]
    scope: str = ALL
    outside: tuple[str, ...] = ()  # "provider region" of the priced regions the scope left out

    def records(self) -> list[dict[str, Any]]:
        return [_record(r) for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "gpu_models": self.gpu_models,
            "since": self.window.since,
            "until": self.window.until,
            "until_newest_price": self.window.early,
            "scope": self.scope,
            "outside_scope": list(self.outside),
            "days": self.records(),
        }

    def flat(self) -> list[dict[str, Any]]:
        """The CSV rows: availability as columns of their own."""
        out = []
        for record in self.records():
            stock = record.pop("availability") or {}
            out.append(record | {key: stock.get(key) for key in DAY_STOCK_KEYS})
        return out


def history_query(
    gpu: str,
    providers: Sequence[str] = (),
    billing: Sequence[str] = (),
    include_variants: bool = False,
    scope: str | None = None,
    config: Config | None = None,
) -> OfferQuery:
    """The offers a history covers, from a command's flags, checked before any database work: ``scope``
    None (no ``--scope`` typed) is ``[quote] scope`` of ``config``."""
    return OfferQuery.build(
        [gpu], providers, (), billing, include_variants=include_variants, scope=chosen_scope(scope, config)
    )


def price_history(engine: Engine, gpu: str, query: OfferQuery, days: int, today: dt.date) -> History:
    """The day-by-day history of ``query``'s GPU models (``gpu`` is what was asked for) over ``days``."""
    from db.queries import newest_price_day
    from db.queries import price_history as rows_of

    models, names, modes = list(query.gpu_models), list(query.providers), list(query.billing)
    left_out: set[tuple[str, str]] = set()

    def in_scope(provider: str, region: str) -> bool:
        inside = within(query.scope, provider, region)
        if not inside:
            left_out.add((provider, region))
        return inside

    keep = None if query.scope == ALL else in_scope
    with engine.connect() as conn:
        newest = newest_price_day(conn, models, names or None, modes or None)
        window = Window.ending(today, newest, days)
        found = rows_of(conn, models, window.since, names or None, modes or None, keep)
    outside = tuple(f"{p} {r}" for p, r in sorted(left_out))
    return History(gpu, models, window, list(found), query.scope, outside)


def _record(r: Any) -> dict[str, Any]:
    stock = None
    if r.stock_known or r.idle_gpus is not None:
        stock = {
            "instances_with_stock": r.stock_known,
            "sold_out": r.sold_out,
            "idle_gpus": r.idle_gpus,
            "total_gpus": r.total_gpus,
            # A marketplace sums idle GPUs over machines (and regions here): the most on any one machine.
            "max_idle_gpus_per_machine": r.max_idle_gpus_per_machine,
        }
    return {
        "day": r.day,
        "provider": r.provider,
        "gpu_model": r.gpu_model,
        "billing": r.billing,
        "instances": r.instances,
        "min_cny_per_gpu_hour": r.min_cny_per_gpu_hour,
        "max_cny_per_gpu_hour": r.max_cny_per_gpu_hour,
        "median_cny_per_gpu_hour": r.median_cny_per_gpu_hour,
        # Against the series' previous day, over the instances priced on both (a price change, not a
        # change of mix), and whether the set of instances changed.
        "change_percent": r.change_percent,
        "set_changed": r.set_changed,
        "availability": stock,
    }
