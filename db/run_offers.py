"""Which offers a provider's refresh runs listed (``run_offers``), and which runs to compare.

A refresh records every offer it stored or found already stored (``record``), in its own transaction,
and drops the lists of the provider's runs that no comparison needs any more: a run's list is only
ever compared with that of the latest complete (``ok``) run before it (``compared_runs``). Runs are
ordered by their id, the order they were made in, never by the time their prices carry: a replayed
recording's prices keep their recorded time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from db.records import chunks
from db.schema import availability, prices, run_offers, scrape_runs
from vocab import STORED_RUN_STATUSES, RunStatus

REFRESH = "refresh"


@dataclass(frozen=True)
class ComparedRuns:
    """A provider's latest stored refresh run, the stored one just before it, and the latest complete
    (``ok``) one before it (None: none yet)."""

    latest: int
    previous: int | None
    complete_before: int | None


def compared_runs(conn: Connection, provider: str) -> ComparedRuns | None:
    """The runs a comparison of ``provider``'s refreshes uses; None when it has none stored. What a
    run listed is compared with the latest complete run before it (a region a partial run lost is no
    offer gone); what it said of stock, with the run just before it."""
    stored = [
        scrape_runs.c.provider == provider,
        scrape_runs.c.kind == REFRESH,
        scrape_runs.c.status.in_(STORED_RUN_STATUSES),
    ]
    found = conn.execute(
        select(scrape_runs.c.id, scrape_runs.c.status)
        .where(*stored)
        .order_by(scrape_runs.c.id.desc())
        .limit(2)
    ).all()
    if not found:
        return None
    latest = int(found[0][0])
    previous = int(found[1][0]) if len(found) > 1 else None
    if len(found) > 1 and found[1][1] == RunStatus.OK:
        return ComparedRuns(latest, previous, previous)
    complete = conn.execute(
        select(scrape_runs.c.id)
        .where(*stored, scrape_runs.c.id < latest, scrape_runs.c.status == RunStatus.OK)
        .order_by(scrape_runs.c.id.desc())
        .limit(1)
    ).scalar()
    return ComparedRuns(latest, previous, None if complete is None else int(complete))


def record(
    conn: Connection,
    provider: str,
    run_id: int,
    offers: Mapping[tuple[int, str], Decimal | None] | Iterable[tuple[int, str]],
) -> None:
    """Record the (instance id, billing) offers run ``run_id`` of ``provider`` listed, with the CNY per
    GPU-hour it saw for each when ``offers`` maps them to it, and forget the lists of its runs older
    than the latest complete one before it: this run and every later one are compared with none older
    (``compared_runs``)."""
    seen: Mapping[tuple[int, str], Decimal | None] = (
        offers if isinstance(offers, Mapping) else dict.fromkeys(offers)
    )
    rows = [
        {"run_id": run_id, "instance_id": iid, "billing": billing, "cny_per_gpu_hour": seen[(iid, billing)]}
        for iid, billing in sorted(seen)
    ]
    for chunk in chunks(rows, 5000):
        conn.execute(insert(run_offers), chunk)
    keep_from = conn.execute(
        select(scrape_runs.c.id)
        .where(
            scrape_runs.c.provider == provider,
            scrape_runs.c.kind == REFRESH,
            scrape_runs.c.status == RunStatus.OK,
            scrape_runs.c.id < run_id,
        )
        .order_by(scrape_runs.c.id.desc())
        .limit(1)
    ).scalar()
    if keep_from is None:
        return
    older = select(scrape_runs.c.id).where(
        scrape_runs.c.provider == provider, scrape_runs.c.kind == REFRESH, scrape_runs.c.id < keep_from
    )
    conn.execute(delete(run_offers).where(run_offers.c.run_id.in_(older)))


def listed(conn: Connection, run_id: int) -> set[tuple[int, str]] | None:
    """The (instance id, billing) offers run ``run_id`` listed; None when it recorded none (a run made
    before 0006, whose list is unknown, or one whose list was forgotten)."""
    rows = conn.execute(
        select(run_offers.c.instance_id, run_offers.c.billing).where(run_offers.c.run_id == run_id)
    ).all()
    return {(int(iid), str(billing)) for iid, billing in rows} or None


def listed_prices(conn: Connection, run_id: int) -> dict[tuple[int, str], Decimal | None]:
    """The CNY per GPU-hour run ``run_id`` saw for each offer it listed (None: not recorded, a run made
    before 0007); empty when it recorded no list."""
    rows = conn.execute(
        select(run_offers.c.instance_id, run_offers.c.billing, run_offers.c.cny_per_gpu_hour).where(
            run_offers.c.run_id == run_id
        )
    ).all()
    return {(int(iid), str(billing)): price for iid, billing, price in rows}


def seen_before(conn: Connection, run_id: int, offers: Iterable[tuple[int, str]]) -> set[tuple[int, str]]:
    """Those of the (instance id, billing) ``offers`` that any other run ever stored: a price level
    (a refresh, an import or the bundled snapshot) or a stock statement. History keeps both for good,
    where run lists are kept for the last runs only: an offer that went away and came back was seen."""
    wanted = set(offers)
    out: set[tuple[int, str]] = set()
    for table in (prices, availability):
        for chunk in chunks(sorted({iid for iid, _billing in wanted}), 500):
            rows = conn.execute(
                select(table.c.instance_id, table.c.billing)
                .where(table.c.instance_id.in_(chunk), table.c.run_id != run_id)
                .distinct()
            )
            out |= {(int(iid), str(billing)) for iid, billing in rows} & wanted
    return out
