"""The report's tables as DataFrames, shaped from the rows of one read each (read only): the latest
prices from ``db.queries.latest_prices``, the rest from ``db.report_queries``, which says how each is
kept on the indexes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd
from sqlalchemy.engine import Connection

from db.queries import latest_prices
from db.report_queries import (
    REPORT_STOCK_COLUMNS,
    RUN_EXTRAS,
    change_rows,
    last_refreshes,
    stock_rows,
    trend_rows,
)
from vocab import PRICE_COLUMNS as VOCAB_PRICE_COLUMNS
from vocab import BillingMode, StockStatus, gpu_hour_basis

# (label, days back, extra days of slack): "the previous day" is the latest observation 1 to 3 days
# before, "the previous week" the latest 7 to 14 days before, so a refresh missed over a weekend still
# shows its change. The old observation's date is in every row (old_on).
PERIODS = (("day", 1, 2), ("week", 7, 7))
TREND_COLUMNS = ("day", "gpu_model", "cny_per_gpu_hour", "offers")
ALL_REGIONS = "all"

# The prices file: the GPU and its price per GPU-hour first (it is sorted by them), then the price's
# own columns (vocab.PRICE_COLUMNS, gpu_count under the report's name), then what the report adds.
_RENAMED = {"gpu_count": "gpus_per_instance", "observed_at": "observed_at_utc"}
_FIRST = ("gpu_model", "cny_per_gpu_hour")
_AFTER = ("unit", "vcpus", "memory_gb", "observed_at", "from_snapshot", "gpu_note", "source")
PRICE_COLUMNS = tuple(
    _RENAMED.get(c, c) for c in (*_FIRST, *(c for c in VOCAB_PRICE_COLUMNS if c not in _FIRST), *_AFTER)
)
CHANGE_COLUMNS = (
    "since",
    "gpu_model",
    "provider",
    "region",
    "instance_type",
    "billing",
    "old_on",
    "new_on",
    "old_price",
    "new_price",
    "currency",
    "unit",
    "change_pct",
    "old_cny_per_gpu_hour",
    "new_cny_per_gpu_hour",
)
_KEY = ("provider", "region", "instance_type", "billing")
AVAILABILITY_COLUMNS = (
    "gpu_model",
    "provider",
    "region",
    "instance_type",
    "gpus_per_instance",
    "billing",
    "stock_status",
    "idle_gpus",
    "total_gpus",
    "max_idle_gpus_per_machine",
    "observed_at_utc",
)
HEALTH_COLUMNS = (
    "provider",
    "status",
    "started_at_utc",
    "finished_at_utc",
    "duration_s",
    "offers_seen",
    "prices_stored",
    "prices_changed",
    *RUN_EXTRAS,
    "unknown_gpus",
    "error",
)


@dataclass(frozen=True)
class CheapestChoice:
    """The planner's pick of each GPU model's cheapest offer within a region scope
    (``planner.answers.report.cheapest_for``): this package judges neither stock, vGPU slices nor regions."""

    offers: Mapping[
        str, tuple[str, str, str, str]
    ]  # per GPU model: (provider, region, instance type, billing)
    scope: str = ALL_REGIONS  # the region scope of the pick, as the cheapest table's scope column says
    in_scope: Callable[[str, str], bool] | None = None  # (provider, region) within the scope; None: all
    notes: tuple[str, ...] = ()  # one line saying the scope, one per model with a cheaper option outside
    # per GPU model, its on-demand headline (``planner.pricing.headline``): the list price per GPU-hour of
    # its cheapest on-demand offer that can be rented now, within the scope, as ``gpus --value`` ranks by
    on_demand: Mapping[str, float] | None = None
    # per GPU model, its place in the report's ranking as (rank, gpu group): ``planner.catalog.rental_rank``,
    # the GPUs teams rent first. The cheapest table runs in this order (cheapest first within a rank) and
    # names the group in its ``gpu_group`` column; None: by GPU model name, no group.
    ranking: Mapping[str, tuple[int, str]] | None = None


def _number(value: Decimal | float | int | None) -> float | None:
    return None if value is None else float(value)


def latest_frame(
    conn: Connection, gpu_models: Sequence[str] | None = None, providers: Sequence[str] | None = None
) -> pd.DataFrame:
    """The latest price of every instance and billing mode, cheapest per GPU-hour first within a GPU."""
    fields = [c for c in (*_FIRST, *VOCAB_PRICE_COLUMNS, *_AFTER) if c != "from_snapshot"]
    records = [
        {_RENAMED.get(c, c): getattr(p, c) for c in fields}
        | {
            "cny_per_gpu_hour": _number(p.cny_per_gpu_hour),
            "price": _number(p.price),
            "from_snapshot": p.run_kind == "snapshot",
            "observed_at_utc": p.last_confirmed_at,  # a price's age counts from its last confirmation
        }
        for p in latest_prices(conn, gpu_models or None, providers or None)
        if p.unlisted_at is None  # what its provider no longer lists is no option (db.catalogue)
    ]
    frame = pd.DataFrame.from_records(records, columns=list(PRICE_COLUMNS))
    frame = _typed(frame, floats=("cny_per_gpu_hour", "gpus_per_instance", "price", "memory_gb"))
    frame["vcpus"] = frame["vcpus"].astype("Int64")
    frame["from_snapshot"] = frame["from_snapshot"].astype(bool)
    frame["observed_at_utc"] = pd.to_datetime(frame["observed_at_utc"])
    return frame.sort_values(
        ["gpu_model", "cny_per_gpu_hour", "provider", "region"], kind="stable"
    ).reset_index(drop=True)


def in_scope(frame: pd.DataFrame, choice: CheapestChoice | None) -> pd.DataFrame:
    """The rows of ``frame`` (with provider and region columns) within ``choice``'s region scope."""
    if choice is None or choice.in_scope is None or frame.empty:
        return frame
    keep = [choice.in_scope(p, r) for p, r in zip(frame["provider"], frame["region"], strict=True)]
    return frame[keep]


def cheapest_frame(latest: pd.DataFrame, choice: CheapestChoice | None = None) -> pd.DataFrame:
    """One row per GPU model: its cheapest option per GPU-hour (spot only where nothing else is sold),
    or, with ``choice``, the offer it names per model (the planner's pricing core decides which can be
    rented now, within its region scope); counts and the cheapest spot price are of that scope too,
    which the ``scope`` column names.

    The rows run in ``choice.ranking``'s order, the GPUs teams rent first (by rank, then cheapest per
    GPU-hour first, then by name), each naming its ``gpu_group``; without one, by GPU model name. Readers
    (the e-mail, the digest) keep this order: it is the report's ranking."""
    columns = [
        "gpu_model",
        "cny_per_gpu_hour",
        "provider",
        "region",
        "instance_type",
        "gpus_per_instance",
        "billing",
        "price",
        "currency",
        "unit",
        "observed_at_utc",
        "from_snapshot",
        "offers",
        "providers",
        "cheapest_spot_cny_per_gpu_hour",
        "scope",
        "cny_per_gpu_hour_basis",
        "on_demand_cny_per_gpu_hour",
        "gpu_group",
    ]
    latest = in_scope(latest, choice)
    if latest.empty:
        return _typed(pd.DataFrame(columns=columns), floats=("cny_per_gpu_hour", "price"))
    ranked = latest.assign(_spot=latest["billing"] == BillingMode.SPOT.value).sort_values(
        ["gpu_model", "_spot", "cny_per_gpu_hour", "provider", "region"], kind="stable"
    )
    if choice is not None:
        chosen = choice.offers
        keys = zip(ranked["gpu_model"], zip(*(ranked[c] for c in _KEY), strict=True), strict=True)
        ranked = ranked[[chosen.get(model) == key for model, key in keys]]
    best = ranked.drop_duplicates("gpu_model").set_index("gpu_model")
    best["scope"] = choice.scope if choice is not None else ALL_REGIONS
    grouped = latest.groupby("gpu_model")
    best["offers"] = grouped.size()
    best["providers"] = grouped["provider"].nunique()
    best["cheapest_spot_cny_per_gpu_hour"] = (
        latest[latest["billing"] == BillingMode.SPOT.value].groupby("gpu_model")["cny_per_gpu_hour"].min()
    )
    best["cny_per_gpu_hour_basis"] = best["billing"].map(gpu_hour_basis)
    if choice is not None and choice.on_demand is not None:
        best["on_demand_cny_per_gpu_hour"] = pd.Series(dict(choice.on_demand), dtype="float64")
    else:
        on_demand = latest[latest["billing"] == BillingMode.ON_DEMAND.value]
        best["on_demand_cny_per_gpu_hour"] = on_demand.groupby("gpu_model")["cny_per_gpu_hour"].min()
    best = _typed(best, floats=("on_demand_cny_per_gpu_hour",))
    return _ranked(best.reset_index(), choice.ranking if choice is not None else None)[columns]


def _ranked(best: pd.DataFrame, ranking: Mapping[str, tuple[int, str]] | None) -> pd.DataFrame:
    """The cheapest table in the ranking's order with its ``gpu_group``; a model the ranking does not
    name comes last, with no group."""
    if ranking is None:
        return best.assign(gpu_group=pd.Series(None, index=best.index, dtype=object))
    rank = best["gpu_model"].map(lambda m: ranking[m][0] if m in ranking else float("inf"))
    group = best["gpu_model"].map(lambda m: ranking[m][1] if m in ranking else None)
    ordered = best.assign(gpu_group=group, _rank=rank).sort_values(
        ["_rank", "cny_per_gpu_hour", "gpu_model"], kind="stable"
    )
    return ordered.drop(columns="_rank").reset_index(drop=True)


def trend_frame(
    conn: Connection,
    until: dt.date | None,
    days: int,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
    choice: CheapestChoice | None = None,
) -> pd.DataFrame:
    """One row per GPU model and day: its cheapest on-demand CNY per GPU-hour (``trend_rows``)
    within ``choice``'s region scope, by model then day; empty when ``until`` is None (no price at all).

    The last day (``until``) is each model's on-demand headline where ``choice`` has it: the price
    ``gpus --value`` and the cheapest table name (the cheapest offer that can be rented now, its latest
    price however long ago it was last confirmed), so the chart's latest point and the e-mail's
    on-demand figure are one number."""
    rows = [] if until is None else trend_rows(conn, until, days, gpu_models, providers)
    regional = in_scope(pd.DataFrame(rows, columns=[*TREND_COLUMNS, "provider", "region"]), choice)
    grouped = regional.groupby(["day", "gpu_model"], as_index=False, sort=False)
    frame = grouped.agg(cny_per_gpu_hour=("cny_per_gpu_hour", "min"), offers=("offers", "sum"))
    if until is not None and choice is not None and choice.on_demand is not None:
        last = frame["day"] == until
        counted = dict(zip(frame.loc[last, "gpu_model"], frame.loc[last, "offers"], strict=True))
        headline = pd.DataFrame(
            [(until, m, float(p), counted.get(m, 1)) for m, p in choice.on_demand.items()],
            columns=list(TREND_COLUMNS),
        )
        frame = pd.concat([frame[~last], headline]) if len(headline) else frame[~last]
    frame = _typed(frame[list(TREND_COLUMNS)], floats=("cny_per_gpu_hour",))
    frame["day"] = pd.to_datetime(frame["day"])
    frame["offers"] = frame["offers"].astype("int64")
    return frame.sort_values(["gpu_model", "day"], kind="stable").reset_index(drop=True)


def changes_frame(
    conn: Connection,
    day: dt.date | None,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Price changes on ``day`` against the previous day and the previous week, biggest moves first."""
    frames = []
    for label, days, slack in PERIODS:
        if day is None:
            break
        rows = change_rows(conn, day, days, slack, gpu_models, providers)
        frames.append(pd.DataFrame([{"since": label, **row} for row in rows], columns=list(CHANGE_COLUMNS)))
    frame = pd.concat(frames) if frames else pd.DataFrame(columns=list(CHANGE_COLUMNS))
    frame = _typed(
        frame, floats=("old_price", "new_price", "change_pct", "old_cny_per_gpu_hour", "new_cny_per_gpu_hour")
    )
    frame["change_pct"] = frame["change_pct"].round(2)
    frame["_size"] = frame["change_pct"].abs()
    frame = frame.sort_values(
        ["since", "_size", "gpu_model", "provider"], ascending=[True, False, True, True]
    )
    return frame.drop(columns="_size").reset_index(drop=True)


def availability_frame(
    conn: Connection,
    latest: pd.DataFrame,
    gpu_models: Sequence[str] | None = None,
    providers: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Stock of every instance and billing mode in ``latest``, from its newest availability row.

    ``stock_status`` is the provider's word (available, sold_out); where it gave only counts, it is
    derived from ``idle_gpus`` (none idle = sold_out); with nothing recorded it is "unknown".
    """
    frame = latest[["gpu_model", "provider", "region", "instance_type", "gpus_per_instance", "billing"]]
    stock = pd.DataFrame(
        stock_rows(conn, gpu_models, providers), columns=[*_KEY, *REPORT_STOCK_COLUMNS, "observed_at_utc"]
    )
    frame = frame.merge(stock, on=list(_KEY), how="left")
    for name in ("idle_gpus", "total_gpus", "max_idle_gpus_per_machine"):
        frame[name] = pd.to_numeric(frame[name]).round().astype("Int64")
    derived = frame["idle_gpus"].map(
        lambda n: StockStatus.AVAILABLE.value if n > 0 else StockStatus.SOLD_OUT.value, na_action="ignore"
    )
    frame["stock_status"] = frame["stock_status"].astype(object).fillna(derived.astype(object))
    frame["stock_status"] = frame["stock_status"].fillna(StockStatus.UNKNOWN.value)
    frame["observed_at_utc"] = pd.to_datetime(frame["observed_at_utc"])
    frame = frame.sort_values(["gpu_model", "provider", "region", "instance_type", "billing"], kind="stable")
    return frame[list(AVAILABILITY_COLUMNS)].reset_index(drop=True)


def health_frame(conn: Connection, providers: Sequence[str]) -> pd.DataFrame:
    """The last refresh of each provider (``providers`` first, then any other refreshed one)."""
    found = last_refreshes(conn)
    records: list[dict[str, Any]] = []
    for name in [*providers, *sorted(set(found) - set(providers))]:
        row = found.get(name)
        if row is None:
            records.append({"provider": name, "status": "never", "error": "no refresh recorded"})
            continue
        duration = (row.finished_at - row.started_at).total_seconds() if row.finished_at else None
        records.append(
            {
                "provider": name,
                "status": row.status,
                "started_at_utc": row.started_at,
                "finished_at_utc": row.finished_at,
                "duration_s": duration,
                "offers_seen": row.offers_seen,
                "prices_stored": row.prices_stored,
                "prices_changed": row.prices_changed,
                "unknown_gpus": row.unknown_gpus,
                "error": row.error,
                **{c: row._mapping[c] for c in RUN_EXTRAS},
            }
        )
    frame = pd.DataFrame.from_records(records, columns=list(HEALTH_COLUMNS))
    for name in ("offers_seen", "prices_stored", "prices_changed", "offers_skipped", "prices_flagged"):
        if name in frame:
            frame[name] = pd.to_numeric(frame[name]).astype("Int64")
    for name in ("started_at_utc", "finished_at_utc"):
        frame[name] = pd.to_datetime(frame[name])
    return _typed(frame, floats=("duration_s",))


def _typed(frame: pd.DataFrame, floats: Sequence[str]) -> pd.DataFrame:
    """Number columns as float64, so they are written (and read back) as numbers, never as text."""
    for name in floats:
        frame[name] = pd.to_numeric(frame[name]).astype("float64")
    return frame
