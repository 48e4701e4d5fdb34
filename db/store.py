"""Writes: runs, instances and append-only price observations.

Callers hand over rows that the planner has already validated and normalised. Each function works on
a connection inside the caller's transaction, so a provider's refresh or a file import is all or
nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import bindparam, exc, insert, select, text, tuple_, update
from sqlalchemy.engine import Connection, Engine

from db.bulk import SIX_PLACES, append_prices
from db.queries import latest_rows, uses_lateral

# The records the writes take and give, named here too: a caller of the writes finds them beside them
# (store.PriceRow, store.InstanceKey).
from db.records import (  # noqa: F401
    AvailabilityRow,
    InstanceKey,
    InstanceRow,
    PriceChange,
    PriceRecord,
    PriceRow,
    StoreCounts,
    chunks,
)
from db.schema import availability, instances, prices, scrape_runs
from vocab import RunStatus

# How long a writer waits for another one (a refresh beside a long import) before it gives up.
WRITE_WAIT_S = 900.0
WRITE_LOCK_KEY = 0x50524943  # "PRIC": the PostgreSQL advisory lock every writer of prices holds


@contextlib.contextmanager
def writing(engine: Engine, wait_s: float = WRITE_WAIT_S) -> Iterator[Connection]:
    """A write transaction that holds the database's write lock from its first statement, waiting up to
    ``wait_s`` for another writer to finish; committed on success, rolled back on any error.

    Writers take turns instead of failing: on SQLite ``BEGIN IMMEDIATE`` (one writer at a time, waited
    for by the busy timeout and retried here until ``wait_s``), on PostgreSQL one advisory lock per
    transaction. So what a writer reads first (is the database empty? is this day stored?) is still
    true when it writes: a snapshot is never loaded beside an import, and two imports of the same
    file never both insert.
    """
    deadline = time.monotonic() + wait_s
    while True:
        conn = engine.connect()
        try:
            trans = conn.begin()
            _take_write_lock(conn, max(1.0, deadline - time.monotonic()))
            break
        except exc.OperationalError as err:
            conn.close()
            if not is_lock_wait(err) or time.monotonic() >= deadline:
                raise
            time.sleep(0.2)
        except BaseException:
            conn.close()
            raise
    try:
        yield conn
        trans.commit()
    except BaseException:
        trans.rollback()
        raise
    finally:
        conn.close()


def _take_write_lock(conn: Connection, wait_s: float) -> None:
    if conn.dialect.name == "sqlite":
        # pysqlite opens a transaction only before a write; BEGIN IMMEDIATE takes the write lock now.
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(text(f"SET LOCAL lock_timeout = '{int(wait_s * 1000)}ms'"))
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": WRITE_LOCK_KEY})


def is_lock_wait(err: BaseException) -> bool:
    """True for "another writer holds the lock" (SQLite's busy database, PostgreSQL's lock timeout)."""
    message = str(getattr(err, "orig", None) or err).lower()
    return "database is locked" in message or "lock timeout" in message or "database is busy" in message


def write_hint(err: BaseException) -> str:
    """What to do about a write the database refused, from what it said (not always the disk)."""
    message = str(getattr(err, "orig", None) or err).lower()
    if is_lock_wait(err):
        return (
            f"another planner process (an import or a refresh) kept the database busy for over "
            f"{WRITE_WAIT_S:g} s; run this again when it has finished"
        )
    if "readonly" in message or "read-only" in message or "read only" in message:
        return (
            "the database is read-only (its file, folder or file system, or the server; a note above "
            "says when its disk is full): make it writable or free space, then retry"
        )
    if "full" in message or "no space" in message or "could not extend" in message:
        return "the disk holding the database is full; make room, then retry"
    if "unique" in message or "duplicate key" in message:
        return "another process stored the same prices at the same moment; run this again"
    return "check that the database (file or server) is reachable and writable, then retry"


class InstanceConflict(Exception):
    """An instance is already recorded with another GPU model or GPU count."""

    def __init__(self, key: InstanceKey, recorded: str, offered: str):
        super().__init__(f"{'/'.join(key)} is recorded as {recorded}, not {offered}")
        self.key = key


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


def start_run(conn: Connection, provider: str, kind: str, source: str | None = None, **extra: Any) -> int:
    """Open a run (status ``running``); ``extra`` sets more columns (``mode``)."""
    result = conn.execute(
        insert(scrape_runs).values(
            provider=provider,
            kind=kind,
            started_at=utcnow(),
            status=RunStatus.RUNNING,
            offers_seen=0,
            prices_stored=0,
            prices_changed=0,
            source=source,
            **extra,
        )
    )
    key = result.inserted_primary_key
    assert key is not None  # an INSERT of one row always has one
    return int(key[0])


def finish_run(conn: Connection, run_id: int, status: str, **counts: Any) -> None:
    """Close a run: status ok/partial/failed/skipped, plus offers_seen, prices_stored, error, ..."""
    conn.execute(
        update(scrape_runs)
        .where(scrape_runs.c.id == run_id)
        .values(status=status, finished_at=utcnow(), **counts)
    )


INTERRUPTED = RunStatus.INTERRUPTED


def close_interrupted_runs(conn: Connection, kind: str, why: str | None = None) -> int:
    """Mark every run of ``kind`` still ``running`` as ``interrupted`` (its process died: killed, power
    cut; or ``why``, such as Ctrl-C); returns how many. Only safe while holding the lock that runs of
    ``kind`` take, so no live run is among them. Such a run stored nothing: each run's prices commit
    with its ``finish_run``."""
    stale = [scrape_runs.c.kind == kind, scrape_runs.c.status == RunStatus.RUNNING]
    if conn.execute(select(scrape_runs.c.id).where(*stale).limit(1)).first() is None:
        return 0  # nothing to close: no write at all (a read-only database then fails where it writes)
    result = conn.execute(
        update(scrape_runs)
        .where(*stale)
        .values(
            status=INTERRUPTED,
            finished_at=utcnow(),
            error=(
                why
                or "the run never recorded its end (the process was killed, or could not write to "
                "the database then)"
            )
            + "; it stored nothing",
        )
    )
    return int(result.rowcount or 0)


def recorded_instances(
    conn: Connection, keys: Iterable[InstanceKey]
) -> dict[InstanceKey, tuple[int, str, float]]:
    """(id, gpu_model, gpu_count) of every key already recorded (so a caller can skip conflicts)."""
    out: dict[InstanceKey, tuple[int, str, float]] = {}
    for chunk in chunks(sorted(set(keys)), 400):
        found = conn.execute(
            select(
                instances.c.provider,
                instances.c.region,
                instances.c.instance_type,
                instances.c.id,
                instances.c.gpu_model,
                instances.c.gpu_count,
            ).where(tuple_(instances.c.provider, instances.c.region, instances.c.instance_type).in_(chunk))
        )
        for provider, region, itype, rid, gpu_model, gpu_count in found:
            out[(provider, region, itype)] = (rid, gpu_model, gpu_count)
    return out


def upsert_instances(conn: Connection, rows: Iterable[InstanceRow]) -> dict[InstanceKey, int]:
    """Insert unknown instances; return the id of every key. A GPU change raises InstanceConflict."""
    wanted: dict[InstanceKey, InstanceRow] = {}
    for row in rows:
        wanted.setdefault(row.key, row)
    ids: dict[InstanceKey, int] = {}
    for key, (rid, gpu_model, gpu_count) in recorded_instances(conn, wanted).items():
        row = wanted[key]
        if row.gpu_model != gpu_model or abs(row.gpu_count - gpu_count) > 1e-9:
            raise InstanceConflict(key, f"{gpu_count:g}x {gpu_model}", f"{row.gpu_count:g}x {row.gpu_model}")
        ids[key] = rid
    missing = [row for key, row in wanted.items() if key not in ids]
    if missing:
        # One executemany, then the ids read back by key: an import meets thousands of new instances.
        conn.execute(
            _insert_new(conn, instances),
            [
                {
                    "provider": row.provider,
                    "region": row.region,
                    "instance_type": row.instance_type,
                    "gpu_model": row.gpu_model,
                    "gpu_count": row.gpu_count,
                    "vcpus": row.vcpus,
                    "memory_gb": row.memory_gb,
                    "gpu_note": row.gpu_note,
                }
                for row in missing
            ],
        )
        for key, (rid, gpu_model, gpu_count) in recorded_instances(conn, [r.key for r in missing]).items():
            row = wanted[key]  # stored by another writer meanwhile, perhaps with another GPU
            if row.gpu_model != gpu_model or abs(row.gpu_count - gpu_count) > 1e-9:
                raise InstanceConflict(
                    key, f"{gpu_count:g}x {gpu_model}", f"{row.gpu_count:g}x {row.gpu_model}"
                )
            ids[key] = rid
    return ids


def _insert_new(conn: Connection, table: Any) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING: a row another writer stored meanwhile is kept, not an error."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    if conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing()
    return insert(table)


def insert_prices(
    conn: Connection, rows: Sequence[PriceRow], instance_ids: Mapping[InstanceKey, int], run_id: int
) -> StoreCounts:
    """Store what a refresh saw: history records changes, not sightings.

    A row at the price (and tiers) of its series' latest stored observation, and not older than it,
    confirms that one: its ``confirmed_at`` moves on, its not-listed mark clears and a marketplace's
    median is brought up to date. A row at another price on that observation's own day replaces it
    (the day keeps its last price; ``run_offers`` keeps what each run saw). Any other row is appended
    (``db.bulk``), an observation already stored for its day being counted as already present.

    ``changed`` counts rows whose price differs from the latest earlier one of their series;
    ``changes`` lists them.
    """
    latest = _latest_levels(conn, {(instance_ids[r.instance], r.billing) for r in rows})
    appended: list[PriceRecord] = []
    confirmed: list[dict[str, Any]] = []
    replaced: list[tuple[int, PriceRow]] = []
    changes: list[PriceChange] = []
    for row in rows:
        level = latest.get((instance_ids[row.instance], row.billing))
        if level is not None and row.observed_at >= level.observed_at:
            if _same_level(level, row):
                confirmed.append(
                    {
                        "k_id": level.id,
                        "k_seen": max(row.observed_at, level.confirmed_at or level.observed_at),
                        "k_median": row.median_price,
                    }
                )
                continue
            if row.observed_at.date() == level.observed_on:
                replaced.append((level.id, row))
                changes.append(
                    PriceChange(row.instance, row.billing, level.observed_on, level.price, row.price)
                )
                continue
        appended.append(_record(row))
    counts = append_prices(conn, appended, instance_ids, run_id, keep_changes=True)
    if confirmed:
        conn.execute(
            update(prices)
            .where(prices.c.id == bindparam("k_id"))
            .values(confirmed_at=bindparam("k_seen"), unlisted_at=None, median_price=bindparam("k_median")),
            confirmed,
        )
    for price_id, row in replaced:
        conn.execute(
            update(prices)
            .where(prices.c.id == price_id)
            .values(
                price=row.price,
                currency=row.currency,
                unit=row.unit,
                cny_per_gpu_hour=row.cny_per_gpu_hour,
                tiers=row.tiers,
                median_price=row.median_price,
                source=row.source,
                observed_at=row.observed_at,
                confirmed_at=None,
                unlisted_at=None,
                run_id=run_id,
            )
        )
    return StoreCounts(
        stored=counts.stored + len(replaced),
        changed=counts.changed + len(replaced),
        already_present=counts.already_present + len(confirmed),
        changes=counts.changes + tuple(changes),
        confirmed=counts.confirmed + len(confirmed),
    )


@dataclass(frozen=True)
class _Level:
    """A series' latest stored observation, as a refresh compares with it."""

    id: int
    observed_at: dt.datetime
    observed_on: dt.date
    confirmed_at: dt.datetime | None
    price: Decimal
    tiers: str | None


def _same_level(level: _Level, row: PriceRow) -> bool:
    return level.price.quantize(SIX_PLACES) == Decimal(row.price).quantize(SIX_PLACES) and (
        level.tiers or None
    ) == (row.tiers or None)


def _latest_levels(conn: Connection, keys: set[tuple[int, str]]) -> dict[tuple[int, str], _Level]:
    """The latest stored observation of each (instance id, billing) series in ``keys``."""
    out: dict[tuple[int, str], _Level] = {}
    for chunk in chunks(sorted({iid for iid, _ in keys}), 400):
        latest = latest_rows(
            prices,
            "observed_on",
            select(instances.c.id).where(instances.c.id.in_(chunk)),
            lateral=uses_lateral(conn),
        )
        found = conn.execute(
            select(
                latest.c.instance_id,
                latest.c.billing,
                latest.c.id,
                latest.c.observed_at,
                latest.c.observed_on,
                latest.c.confirmed_at,
                latest.c.price,
                latest.c.tiers,
            )
        )
        for iid, billing, *level in found:
            if (iid, billing) in keys:
                out[(iid, billing)] = _Level(*level)
    return out


def _record(row: PriceRow) -> PriceRecord:
    return PriceRecord(
        row.instance,
        row.billing,
        row.observed_at,
        row.observed_at.date(),
        row.price,
        row.currency,
        row.unit,
        row.cny_per_gpu_hour,
        row.source,
        row.tiers,
        row.median_price,
    )


def insert_availability(
    conn: Connection, rows: Sequence[AvailabilityRow], instance_ids: Mapping[InstanceKey, int], run_id: int
) -> int:
    """Append this run's stock observations (one per instance and billing mode); returns how many."""
    values: dict[tuple[int, str], dict[str, Any]] = {}
    for row in rows:
        iid = instance_ids[row.instance]
        values.setdefault(
            (iid, row.billing),
            {
                "instance_id": iid,
                "billing": row.billing,
                "run_id": run_id,
                "observed_at": row.observed_at,
                "observed_on": row.observed_at.date(),
                "stock_status": row.stock_status,
                "idle_gpus": row.idle_gpus,
                "total_gpus": row.total_gpus,
                "orderable_gpus": row.orderable_gpus,
                "max_idle_gpus_per_machine": row.max_idle_gpus_per_machine,
                "max_orderable_gpus_per_machine": row.max_orderable_gpus_per_machine,
            },
        )
    batch = list(values.values())
    for chunk in chunks(batch, 5000):
        conn.execute(insert(availability), chunk)
    return len(batch)
