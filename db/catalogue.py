"""A provider's current catalogue: what its latest complete refresh listed.

An offer (instance and billing mode) of a provider that has refreshed is current only when the refresh
that judges it listed it: the provider's latest complete (``ok``) refresh, or a later partial one that
covered the offer's region (a partial run supersedes the regions it listed offers in, and says nothing
of the others). Anything else of that provider (a bundled snapshot row, an imported row, an earlier
run's listing) is "not listed at the last refresh": kept in history, never recommended. A provider
never refreshed keeps its snapshot and imported rows; what an import or the snapshot itself marked as
no longer listed (``prices.unlisted_at``) stays so until a refresh lists it again.

A run recorded before its list was kept (``run_offers`` since 0006, or a list already forgotten) says
nothing: its provider's offers then count as listed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Connection

from db.records import chunks
from db.run_offers import REFRESH
from db.schema import instances, run_offers, scrape_runs
from vocab import STORED_RUN_STATUSES, RunStatus


@dataclass(frozen=True)
class Listed:
    """One offer as the catalogue rule needs it."""

    instance_id: int
    provider: str
    region: str
    billing: str


@dataclass(frozen=True)
class _Judge:
    run_id: int
    complete: bool
    started_at: dt.datetime
    regions: frozenset[str]  # the regions a partial run listed offers in (all, for a complete one)


def unlisted_at(conn: Connection, offers: Iterable[Listed]) -> dict[tuple[int, str], dt.datetime]:
    """For each offer its provider's judging refresh did not list: when that refresh started. Offers of
    providers never refreshed (or whose judging run kept no list) are absent: they count as listed."""
    by_provider: dict[str, list[Listed]] = {}
    for offer in offers:
        by_provider.setdefault(offer.provider, []).append(offer)
    out: dict[tuple[int, str], dt.datetime] = {}
    for provider, wanted in by_provider.items():
        judges = _judges(conn, provider)
        if not judges:
            continue
        listed = {j.run_id: _listed(conn, j.run_id, {o.instance_id for o in wanted}) for j in judges}
        for offer in wanted:
            judge = next((j for j in judges if j.complete or offer.region in j.regions), None)
            if judge is None or listed[judge.run_id] is None:
                continue
            if (offer.instance_id, offer.billing) not in listed[judge.run_id]:  # type: ignore[operator]
                out[(offer.instance_id, offer.billing)] = judge.started_at
    return out


def _judges(conn: Connection, provider: str) -> list[_Judge]:
    """The provider's stored refresh runs from the newest back to its latest complete one (inclusive),
    newest first; empty when it has no complete refresh with a kept list (nothing then judges)."""
    runs = conn.execute(
        select(scrape_runs.c.id, scrape_runs.c.status, scrape_runs.c.started_at)
        .where(
            scrape_runs.c.provider == provider,
            scrape_runs.c.kind == REFRESH,
            scrape_runs.c.status.in_(STORED_RUN_STATUSES),
        )
        .order_by(scrape_runs.c.id.desc())
        .limit(50)
    ).all()
    judges: list[_Judge] = []
    for run_id, status, started_at in runs:
        complete = status == RunStatus.OK
        regions = frozenset() if complete else _regions(conn, int(run_id))
        judges.append(_Judge(int(run_id), complete, started_at, regions))
        if complete:
            return judges
    return judges  # no complete refresh: the partial ones judge the regions they covered


def _regions(conn: Connection, run_id: int) -> frozenset[str]:
    rows = conn.execute(
        select(instances.c.region)
        .distinct()
        .select_from(run_offers.join(instances, instances.c.id == run_offers.c.instance_id))
        .where(run_offers.c.run_id == run_id)
    )
    return frozenset(str(r) for (r,) in rows)


def _listed(conn: Connection, run_id: int, instance_ids: set[int]) -> set[tuple[int, str]] | None:
    """Which offers of ``instance_ids`` run ``run_id`` listed; None when the run kept no list at all."""
    kept = conn.execute(select(run_offers.c.run_id).where(run_offers.c.run_id == run_id).limit(1)).first()
    if kept is None:
        return None
    found: set[tuple[int, str]] = set()
    for chunk in chunks(sorted(instance_ids), 500):
        rows = conn.execute(
            select(run_offers.c.instance_id, run_offers.c.billing).where(
                run_offers.c.run_id == run_id, run_offers.c.instance_id.in_(chunk)
            )
        )
        found.update((int(i), str(b)) for i, b in rows)
    return found
