"""The latest price of every instance and billing mode (``planner prices``), as records.

``latest(engine, query)`` reads the database and returns a :class:`PriceList`; the command only prints
it. When nothing matches, ``PriceList.would_match`` says what would (a variant, a region's spelling).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from db.records import Stock
from planner.answers.near import NearMatch, would_match
from planner.pricing.cost import OfferQuery
from planner.pricing.offer import STOCK_COLUMNS, stock_columns

if TYPE_CHECKING:  # db.queries is imported on use (it loads SQLAlchemy's SQL layer)
    from db.queries import LatestPrice


@dataclass(frozen=True)
class ListedPrice:
    """One instance's latest price on one billing mode, and the stock stated for it (or None).

    Its fields are the JSON record's keys, in order: ``vocab.PRICE_COLUMNS`` first (a test holds them
    to it), then what a stored latest price adds. All but ``from_snapshot`` and ``availability`` are
    the stored latest price's own fields (``db.queries.LatestPrice``), taken by name.
    """

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: float
    billing: str
    price: Decimal
    currency: str
    unit: str
    cny_per_gpu_hour: Decimal
    observed_at: dt.datetime  # when the price was last confirmed
    source: str | None
    from_snapshot: bool
    gpu_note: str | None
    median_price: Decimal | None
    availability: Stock | None
    first_seen_at: dt.datetime  # when this price was first seen
    # When the provider's latest refresh (or the newest source) no longer listed the offer; None: listed.
    unlisted_at: dt.datetime | None

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["availability"] = self.availability.to_dict() if self.availability else None
        return out

    @classmethod
    def of(cls, latest: LatestPrice, availability: Stock | None) -> ListedPrice:
        return cls(
            **{name: getattr(latest, name) for name in _FROM_LATEST},
            from_snapshot=latest.run_kind == "snapshot",
            availability=availability,
            observed_at=latest.last_confirmed_at,
            first_seen_at=latest.observed_at,
        )

    def flat(self) -> dict[str, Any]:
        """The CSV row: availability as stock_* columns."""
        return self.to_dict() | stock_columns(self.availability)


_OWN = ("from_snapshot", "availability", "observed_at", "first_seen_at")
_FROM_LATEST = tuple(f.name for f in fields(ListedPrice) if f.name not in _OWN)
# The CSV columns: the JSON record with its availability flattened into stock_* columns, less the
# orderable counts (the prices file never carried them; `--format json` does).
CSV_COLUMNS = (
    *(f.name for f in fields(ListedPrice) if f.name != "availability"),
    *(c for c in STOCK_COLUMNS if "orderable" not in c),
)


@dataclass(frozen=True)
class PriceList:
    """The prices a query matched, cheapest per GPU-hour first within each GPU model."""

    rows: list[ListedPrice]
    would_match: NearMatch  # when rows is empty: what else is stored that a user may have meant

    def to_dict(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]


def latest(engine: Engine, query: OfferQuery) -> PriceList:
    """The latest price of every instance and billing mode ``query`` selects, with its stock."""
    from db.queries import current_availability, latest_prices

    with engine.connect() as conn:
        found = latest_prices(
            conn,
            list(query.gpu_models) or None,
            list(query.providers) or None,
            list(query.regions) or None,
            list(query.billing) or None,
        )
        stock = current_availability(conn, found)
        near = NearMatch() if found else would_match(conn, query)
    rows = [
        ListedPrice.of(p, stock.get((p.instance_id, p.billing)))
        for p in sorted(found, key=lambda p: (p.gpu_model, p.cny_per_gpu_hour, p.provider))
    ]
    return PriceList(rows, near)
