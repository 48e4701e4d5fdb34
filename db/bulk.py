"""The bulk write path for prices: checked records appended with one executemany per batch.

``db.store.insert_prices`` (a refresh: one batch of PriceRows) and ``planner import`` (a file of any
length, in batches inside one transaction) both come here, so the rules are the same: one observation
per instance, billing mode and day, the first of a batch winning; ``changed`` counted against the
latest earlier observation of each series. History records changes, not sightings: a record at the
same price as the observation before it in its series confirms that one (its ``confirmed_at`` moves
on) instead of adding a row. Records are ``db.records.PriceRecord``. Values are bound
the way SQLAlchemy binds them, without building a parameter dictionary per row (see ``_PriceValues``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from operator import itemgetter
from typing import Any

from sqlalchemy import bindparam, func, insert, or_, select, tuple_, update
from sqlalchemy.engine import Connection

from db.queries import latest_rows, uses_lateral
from db.records import InstanceKey, PriceChange, PriceRecord, StoreCounts, chunks
from db.schema import instances, price_corrections, prices

SIX_PLACES = Decimal("0.000001")  # what prices.price keeps

_INSERTED = (
    "instance_id",
    "billing",
    "price",
    "currency",
    "unit",
    "cny_per_gpu_hour",
    "tiers",
    "observed_at",
    "observed_on",
    "run_id",
    "source",
    "median_price",
    "confirmed_at",
    "unlisted_at",
)
_CONFIRMED = _INSERTED.index("confirmed_at")
_UNLISTED = _INSERTED.index("unlisted_at")


def append_prices(
    conn: Connection,
    records: Sequence[PriceRecord],
    instance_ids: Mapping[InstanceKey, int],
    run_id: int,
    keep_changes: bool = False,
) -> StoreCounts:
    """``insert_prices`` for bulk records, in one batch: the same rules, counts and stored values.

    The first record of an (instance, billing, day) wins; one already stored is counted as already
    present. ``changed`` counts the new observations whose price differs from the latest earlier one
    of their series, stored or new; ``changes`` lists them only with ``keep_changes``. A stream too
    long for one batch goes through ``PriceBatches``.
    """
    counts, _ = _append(conn, records, instance_ids, run_id, keep_changes, {})
    return counts


class PriceBatches:
    """One run's prices appended batch by batch inside the caller's transaction (a file import).

    Counts add up over the batches. ``changed`` is counted batch by batch while every series gets its
    days in order from one batch to the next (as in an export, or a file sorted by instance or by day);
    when a later batch brings a series an older day than an earlier batch stored, it is counted again
    at the end, in SQL over the run's rows, so the count never depends on batch size or row order.
    """

    def __init__(self, conn: Connection, run_id: int):
        self.conn = conn
        self.run_id = run_id
        self.stored = 0
        self.already_present = 0
        # Records whose (instance, billing, day) is stored at another price, in file order; counted in
        # already_present too. ``replace_corrections`` stores them in place of the old prices.
        self.corrections: list[Correction] = []
        self._changed = 0
        self._newest: dict[tuple[int, str], dt.date] = {}
        self._in_order = True

    def append(self, records: Sequence[PriceRecord], instance_ids: Mapping[InstanceKey, int]) -> None:
        counts, in_order = _append(
            self.conn, records, instance_ids, self.run_id, False, self._newest, self.corrections
        )
        self.stored += counts.stored
        self.already_present += counts.already_present
        self._changed += counts.changed
        self._in_order = self._in_order and in_order

    @property
    def changed(self) -> int:
        return self._changed if self._in_order else count_changed(self.conn, self.run_id)


@dataclass(frozen=True)
class Correction:
    """A price for an (instance, billing, day) that is stored at another price."""

    record: PriceRecord
    key: tuple[int, str, dt.date]  # instance_id, billing, day
    stored_price: Decimal


# The optional columns of a price a correction may give; one it does not give keeps its stored value.
CORRECTABLE_COLUMNS: tuple[str, ...] = ("tiers", "median_price", "source", "confirmed_at", "unlisted_at")
# What the old row keeps in ``price_corrections`` (all of it but its id and run, which have own columns).
_KEPT = (
    "instance_id",
    "billing",
    "observed_on",
    "price",
    "currency",
    "unit",
    "cny_per_gpu_hour",
    "tiers",
    "observed_at",
    "source",
    "median_price",
    "confirmed_at",
    "unlisted_at",
)


def replace_corrections(
    conn: Connection,
    corrections: Sequence[Correction],
    run_id: int,
    columns: Collection[str] = CORRECTABLE_COLUMNS,
) -> None:
    """Store each correction's price in place of the stored observation of its day, which then belongs
    to ``run_id``. The stored row is first copied whole into ``price_corrections`` (recoverable with
    ``replaced_prices``). The price, its currency, unit and CNY per GPU-hour and ``observed_at`` are
    always the correction's; of ``CORRECTABLE_COLUMNS`` only those in ``columns`` (the ones the
    correcting file has) change: a file without a ``tiers`` column keeps the stored tiers."""
    given = [c for c in CORRECTABLE_COLUMNS if c in columns]
    for correction in corrections:
        instance_id, billing, day = correction.key
        record = correction.record
        where = (
            prices.c.instance_id == instance_id,
            prices.c.billing == billing,
            prices.c.observed_on == day,
        )
        conn.execute(
            insert(price_corrections).from_select(
                ["price_id", "run_id", "replaced_run_id", *_KEPT],
                select(
                    prices.c.id,
                    bindparam("correcting_run", run_id),
                    prices.c.run_id,
                    *(prices.c[c] for c in _KEPT),
                ).where(*where),
            )
        )
        values: dict[str, Any] = {
            "price": record.price,
            "currency": record.currency,
            "unit": record.unit,
            "cny_per_gpu_hour": record.cny_per_gpu_hour,
            "observed_at": record.observed_at,
            "run_id": run_id,
        }
        values.update({c: getattr(record, c) for c in given})
        conn.execute(update(prices).where(*where).values(**values))


def stored_tiers(
    conn: Connection, keys: Sequence[tuple[int, str, dt.date]]
) -> dict[tuple[int, str, dt.date], str]:
    """The stored tiers (JSON) of each of ``keys`` (instance_id, billing, day) that has some."""
    found: dict[tuple[int, str, dt.date], str] = {}
    for chunk in chunks(sorted(set(keys)), 400):
        rows = conn.execute(
            select(prices.c.instance_id, prices.c.billing, prices.c.observed_on, prices.c.tiers).where(
                tuple_(prices.c.instance_id, prices.c.billing, prices.c.observed_on).in_(list(chunk)),
                prices.c.tiers.is_not(None),
            )
        )
        found.update(((i, b, d), t) for i, b, d, t in rows)
    return found


def replaced_prices(conn: Connection, run_id: int | None = None) -> list[dict[str, Any]]:
    """Every stored row an import replaced (only those ``run_id`` replaced, when given), oldest first,
    as it was: its instance (provider, region, instance type), the correcting run and the old run."""
    query = (
        select(
            price_corrections,
            instances.c.provider,
            instances.c.region,
            instances.c.instance_type,
        )
        .join(instances, instances.c.id == price_corrections.c.instance_id)
        .order_by(price_corrections.c.id)
    )
    if run_id is not None:
        query = query.where(price_corrections.c.run_id == run_id)
    return [dict(row) for row in conn.execute(query).mappings()]


def move_to_run(
    conn: Connection, from_run: int, to_run: int, keys: Sequence[tuple[int, str, dt.date]]
) -> int:
    """Give the observations ``from_run`` stored for ``keys`` (instance id, billing, day) to ``to_run``;
    returns how many moved."""
    moved = 0
    for chunk in chunks(sorted(keys), 400):
        result = conn.execute(
            update(prices)
            .where(
                prices.c.run_id == from_run,
                tuple_(prices.c.instance_id, prices.c.billing, prices.c.observed_on).in_(list(chunk)),
            )
            .values(run_id=to_run)
        )
        moved += int(result.rowcount or 0)
    return moved


def _six_places(value: Decimal) -> Decimal:
    return Decimal(value).quantize(SIX_PLACES)


def count_changed(conn: Connection, run_id: int) -> int:
    """How many prices stored by ``run_id`` differ from the latest earlier observation of their series
    (one index seek per row; the rows of the run are found by a scan)."""
    q = prices.alias("q")
    before = (
        select(q.c.price)
        .where(
            q.c.instance_id == prices.c.instance_id,
            q.c.billing == prices.c.billing,
            q.c.observed_on < prices.c.observed_on,
        )
        .order_by(q.c.observed_on.desc())
        .limit(1)
        .scalar_subquery()
    )
    query = (
        select(func.count()).select_from(prices).where(prices.c.run_id == run_id, prices.c.price != before)
    )
    return int(conn.execute(query).scalar_one())


def _append(
    conn: Connection,
    records: Sequence[PriceRecord],
    instance_ids: Mapping[InstanceKey, int],
    run_id: int,
    keep_changes: bool,
    newest: dict[tuple[int, str], dt.date],
    corrections: list[Correction] | None = None,
) -> tuple[StoreCounts, bool]:
    """Store one batch; ``newest`` holds the newest day earlier batches stored per series and is
    updated. Also returns whether no series got a day older than those (so ``changed`` is final).
    A record whose day is stored at another price is added to ``corrections`` when it is given."""
    if not records:
        return StoreCounts(0, 0, 0), True
    pending: dict[tuple[int, str, dt.date], PriceRecord] = {}
    keep_first = pending.setdefault
    for record in records:
        keep_first((instance_ids[record.instance], record.billing, record.observed_on), record)
    existing = _stored_keys(conn, pending)
    new_keys = [k for k in pending if k not in existing] if existing else list(pending)
    if corrections is not None and existing:
        corrections.extend(  # a day stored by this run (an earlier batch) keeps its first row
            Correction(pending[k], k, existing[k][0])
            for k in pending
            if k in existing
            and existing[k][1] != run_id
            and _six_places(pending[k].price) != _six_places(existing[k][0])
        )
    new_keys.sort(key=itemgetter(2))  # stable: oldest first, file order within a day
    previous, later = _stored_around(conn, new_keys)
    to_db = _PriceValues(conn.dialect)
    changes: list[PriceChange] = []
    changed = 0
    confirmed = 0
    in_order = True
    values: list[tuple] = []
    # A confirmation lands on the observation before it: a row of this batch (its index in ``values``)
    # or a stored one (its key); either way the latest moment that saw the price wins.
    batch_row: dict[tuple[int, str], int] = {}
    confirm_new: dict[int, tuple[dt.datetime, dt.datetime | None]] = {}
    confirm_stored: dict[tuple[int, str, dt.date], tuple[dt.datetime, dt.datetime | None]] = {}
    for key in new_keys:
        record = pending[key]
        series = (key[0], key[1])
        price = record.price
        stored = later.get(series)
        while stored and stored[-1][0] < key[2]:  # stored observations between the new ones
            previous[series] = stored.pop()
            batch_row.pop(series, None)
        before = previous.get(series)
        if before is not None and before[1] == price:
            seen = record.confirmed_at or record.observed_at
            confirmed += 1
            index = batch_row.get(series)
            if index is not None:
                was_new = confirm_new.get(index)
                if was_new is None or was_new[0] <= seen:  # the newest sighting says whether it is listed
                    confirm_new[index] = (seen, record.unlisted_at)
            else:
                at = (series[0], series[1], before[0])
                was = confirm_stored.get(at)
                if was is None or was[0] < seen:
                    confirm_stored[at] = (seen, record.unlisted_at)
            continue
        if before is not None and before[1] != price:
            changed += 1
            if keep_changes:
                changes.append(
                    PriceChange(record.instance, record.billing, before[0], Decimal(before[1]), price)
                )
        previous[series] = (key[2], price)
        if in_order and key[2] < newest.get(series, key[2]):
            in_order = False
        batch_row[series] = len(values)
        values.append(to_db.row(key[0], record, run_id))
    for index, (seen, unlisted) in confirm_new.items():
        row = list(values[index])
        row[_CONFIRMED] = to_db.moment(seen)
        row[_UNLISTED] = None if unlisted is None else to_db.moment(unlisted)
        values[index] = tuple(row)
    to_db.insert(conn, values)
    _confirm(conn, confirm_stored)
    for series, (day, _) in previous.items():  # each series' newest observation, stored or new
        if series not in newest or newest[series] < day:
            newest[series] = day
    counts = StoreCounts(
        stored=len(values),
        changed=changed,
        already_present=len(records) - len(values),
        changes=tuple(changes),
        confirmed=confirmed,
    )
    return counts, in_order


def _confirm(
    conn: Connection, confirmations: Mapping[tuple[int, str, dt.date], tuple[dt.datetime, dt.datetime | None]]
) -> None:
    """Move each stored observation's last confirmation on to the moment given (never back), and set
    its not-listed mark to what the confirming record said."""
    if not confirmations:
        return
    statement = (
        update(prices)
        .where(
            prices.c.instance_id == bindparam("k_instance"),
            prices.c.billing == bindparam("k_billing"),
            prices.c.observed_on == bindparam("k_day"),
            or_(prices.c.confirmed_at.is_(None), prices.c.confirmed_at < bindparam("k_seen")),
        )
        .values(confirmed_at=bindparam("k_seen"), unlisted_at=bindparam("k_unlisted"))
    )
    rows = [
        {"k_instance": i, "k_billing": b, "k_day": d, "k_seen": seen, "k_unlisted": unlisted}
        for (i, b, d), (seen, unlisted) in confirmations.items()
    ]
    for chunk in chunks(rows, 5000):
        conn.execute(statement, list(chunk))


class _PriceValues:
    """Rows for ``prices`` as the DBAPI takes them, inserted with one executemany (one COPY on
    PostgreSQL with psycopg).

    SQLAlchemy's own per-column bind processors make the values (on SQLite a DateTime is the string
    SQLAlchemy writes and reads back, a Numeric a float; PostgreSQL takes them as they are), so what is
    stored is exactly what ``insert(prices)`` would store, without compiling and processing
    parameters row by row. A day's date and time repeat in every row of that day: converted once.
    """

    _MARKS = {"qmark": "?", "format": "%s", "pyformat": "%s"}

    def __init__(self, dialect: Any):
        self.mark = self._MARKS.get(dialect.paramstyle)
        self.dialect = dialect

        def processor(name: str) -> Any:
            if self.mark is None:  # named parameters: SQLAlchemy binds (and converts) them itself
                return _same
            column = prices.c[name]
            return column.type.dialect_impl(dialect).bind_processor(dialect) or _same

        self.number = processor("price")
        self.cny = processor("cny_per_gpu_hour")
        self.median = processor("median_price")
        self.moment = _memo(processor("observed_at"))
        self.day = _memo(processor("observed_on"))

    def row(self, instance_id: int, record: PriceRecord, run_id: int) -> tuple:
        # Unpacked in one step (the record's field order): the hot loop of a million-row import.
        (
            _,
            billing,
            observed_at,
            observed_on,
            price,
            currency,
            unit,
            cny,
            source,
            tiers,
            median,
            seen,
            unlisted,
        ) = record
        return (
            instance_id,
            billing,
            self.number(price),
            currency,
            unit,
            self.cny(cny),
            tiers,
            self.moment(observed_at),
            self.day(observed_on),
            run_id,
            source,
            None if median is None else self.median(median),
            None if seen is None else self.moment(seen),
            None if unlisted is None else self.moment(unlisted),
        )

    def insert(self, conn: Connection, values: list[tuple]) -> None:
        if not values:
            return
        if self.mark is None:
            conn.execute(insert(prices), [dict(zip(_INSERTED, v, strict=True)) for v in values])
            return
        prep = self.dialect.identifier_preparer
        table, columns = prep.format_table(prices), ", ".join(prep.quote(c) for c in _INSERTED)
        if self.dialect.driver == "psycopg":
            # PostgreSQL's COPY, in the same transaction: four times the rows per second of an
            # executemany, which still sends and executes every row as a statement of its own.
            cursor = conn.connection.cursor()
            try:
                with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in values:
                        copy.write_row(row)
            finally:
                cursor.close()
            return
        conn.exec_driver_sql(
            f"INSERT INTO {table} ({columns}) VALUES ({', '.join([self.mark] * len(_INSERTED))})", values
        )


def _same(value: Any) -> Any:
    return value


def _memo(convert: Any) -> Any:
    if convert is _same:
        return _same
    done: dict[Any, Any] = {}

    def converted(value: Any) -> Any:
        try:
            return done[value]
        except KeyError:
            done[value] = out = convert(value)
            return out

    return converted


def _stored_keys(
    conn: Connection, keys: Iterable[tuple[int, str, dt.date]]
) -> dict[tuple[int, str, dt.date], tuple[Decimal, int]]:
    """Which of ``keys`` (instance_id, billing, day) are already stored, with their price and run."""
    keys = list(keys)
    days = sorted(set(map(itemgetter(2), keys)))
    existing: dict[tuple[int, str, dt.date], tuple[Decimal, int]] = {}
    for chunk in chunks(sorted(set(map(itemgetter(0), keys))), 500):
        stored = conn.execute(
            select(
                prices.c.instance_id, prices.c.billing, prices.c.observed_on, prices.c.price, prices.c.run_id
            ).where(prices.c.instance_id.in_(chunk), prices.c.observed_on.in_(days))
        )
        existing.update(((i, b, d), (p, r)) for i, b, d, p, r in stored)
    return existing


def _any_stored(conn: Connection, instance_ids: Sequence[int]) -> bool:
    """Whether any price of these instances is stored (one index seek)."""
    found = conn.execute(select(prices.c.instance_id).where(prices.c.instance_id.in_(instance_ids)).limit(1))
    return found.first() is not None


def _stored_around(
    conn: Connection, keys: Sequence[tuple[int, str, dt.date]]
) -> tuple[
    dict[tuple[int, str], tuple[dt.date, Decimal]], dict[tuple[int, str], list[tuple[dt.date, Decimal]]]
]:
    """What is stored around the new ``keys`` (instance_id, billing, day), per series: the latest
    observation before the batch's first day, and those from that day to its last, newest first."""
    before: dict[tuple[int, str], tuple[dt.date, Decimal]] = {}
    within: dict[tuple[int, str], list[tuple[dt.date, Decimal]]] = {}
    if not keys:
        return before, within
    days = set(map(itemgetter(2), keys))
    first, last = min(days), max(days)
    wanted = set(map(itemgetter(0, 1), keys))
    for chunk in chunks(sorted(set(map(itemgetter(0), keys))), 400):
        if not _any_stored(conn, chunk):  # new instances (a first refresh or import): nothing around
            continue
        latest = latest_rows(
            prices,
            "observed_on",
            select(instances.c.id).where(instances.c.id.in_(chunk)),
            below=first,
            lateral=uses_lateral(conn),
        )
        rows = conn.execute(
            select(latest.c.instance_id, latest.c.billing, latest.c.observed_on, latest.c.price)
        )
        before.update(((i, b), (d, p)) for i, b, d, p in rows if (i, b) in wanted)
        rows = conn.execute(
            select(prices.c.instance_id, prices.c.billing, prices.c.observed_on, prices.c.price)
            .where(prices.c.instance_id.in_(chunk), prices.c.observed_on.between(first, last))
            .order_by(prices.c.observed_on.desc())
        )
        for i, b, d, p in rows:
            if (i, b) in wanted:
                within.setdefault((i, b), []).append((d, p))
    return before, within
