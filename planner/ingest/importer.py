"""``planner import``: a CSV file of prices into the database, atomically.

Columns (header row, any order; declared in ``vocab``): required ``provider, region, instance_type,
gpu_model, gpu_count, billing, price, currency, observed_at``; optional ``vcpus, memory_gb, source`` and
the columns ``planner export`` adds (``LOSSLESS_COLUMNS``). ``price`` is the price of the whole instance for one unit
of ``billing``. Rows are checked and written in batches inside one transaction that holds the
database's write lock: the first bad row stops the import with its line number (the header is line 1)
and the transaction is rolled back, so nothing of the file is stored. Re-importing a file adds nothing:
one observation per instance, billing mode and day; a row whose day is stored at another price is a
conflict, refused with its line unless ``replace``.

Numbers are read by ``planner.units.parse_decimal`` (no ``8,68``, ``3_0`` or non-ASCII digits), every
price checked by ``planner.ingest.normalize.check_price`` and against its GPU model's plausibility band
(``planner.ingest.band``: a price too cheap to be true is refused with its line); names lose invisible characters
(``planner.text``), and a control character or a name starting like a formula is refused.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import IO

from sqlalchemy import exc
from sqlalchemy.engine import Connection, Engine

from db import store
from db.bulk import (
    CORRECTABLE_COLUMNS,
    Correction,
    PriceBatches,
    move_to_run,
    replace_corrections,
    stored_tiers,
)
from db.queries import has_prices
from db.records import PriceRecord
from db.store import AvailabilityRow, InstanceConflict, InstanceKey, InstanceRow
from planner import catalog
from planner.billing import HOURLY_MODES
from planner.errors import DatabaseError, PlannerError, UsageError
from planner.ingest.normalize import (
    MAX_COUNT,
    billing_and_unit,
    check_gpu_count,
    check_name,
    check_tier,
    cny_per_gpu_hour,
    is_suspicious_move,
    parse_price,
)
from planner.money import PriceRejected, fx_rate
from planner.providers import canonical_provider
from planner.text import CONTROL, first_line, without_invisible
from planner.units import parse_decimal
from planner.wording import Phrase
from reports.cells import FORMULA_PREFIXES
from vocab import (
    EXPORT_COLUMNS,
    IMPORT_COLUMNS,
    IMPORT_REQUIRED_COLUMNS,
    STORED_STOCK_STATUSES,
    RunStatus,
)

MAX_FIELD_CHARS = 500
BATCH_ROWS = 20_000  # rows checked and written at a time inside the one transaction
csv.field_size_limit(1_000_000)  # a huge field is reported by our own check, with its line number


ROW_HINT = "fix that row and import the file again; nothing of it was stored"


class ImportFileError(UsageError):
    """A file that cannot be imported; the message names the file and line."""


@dataclass(frozen=True)
class ImportResult:
    rows: int
    stored: int
    changed: int
    already_present: int
    instances: int
    run_id: int
    replaced: int = 0  # stored prices corrected (--replace); the old rows are in price_corrections


def import_file(
    engine: Engine, path: str | os.PathLike[str], fx: Mapping[str, object], replace: bool = False
) -> ImportResult:
    """``planner import``: :func:`import_csv` of a user's file, a database that refuses the write (full
    disk, read-only file or server) said in one line. The import is one transaction: nothing of the
    file is stored then."""
    try:
        return import_csv(engine, path, fx, replace=replace)
    except exc.DBAPIError as err:
        raise DatabaseError(
            f"nothing imported from {path}: the database refused the write ({first_line(err)})",
            hint=store.write_hint(err),
        ) from None


def import_csv(
    engine: Engine,
    path: str | os.PathLike[str],
    fx: Mapping[str, object],
    kind: str = "import",
    extra_columns: tuple[str, ...] = (),
    batch_rows: int = BATCH_ROWS,
    replace: bool = False,
) -> ImportResult:
    """Check and store every row of ``path`` in one transaction inside a run of ``kind``.

    Rows are read and written in batches, so memory stays flat however long the file; a bad row
    anywhere rolls the whole transaction back, so nothing of the file is stored. The transaction
    holds the database's write lock (``db.store.writing``): writers take turns.

    A row whose instance, billing mode and day is stored at another price is a conflict: the import
    is refused naming each one with its line, unless ``replace``, when the row's price is stored
    instead (only the columns the file has change) and the old row kept whole in ``price_corrections``.
    """
    result = _import(engine, path, fx, kind, extra_columns, batch_rows, only_if_empty=False, replace=replace)
    assert result is not None  # only an import into an empty database can be skipped
    return result


def import_if_empty(
    engine: Engine,
    path: str | os.PathLike[str],
    fx: Mapping[str, object],
    kind: str,
    extra_columns: tuple[str, ...],
) -> ImportResult | None:
    """``import_csv`` when the database holds no price once the write lock is held (the bundled
    snapshot's first load); None when another process stored prices first."""
    return _import(engine, path, fx, kind, extra_columns, BATCH_ROWS, only_if_empty=True, replace=False)


def _import(
    engine: Engine,
    path: str | os.PathLike[str],
    fx: Mapping[str, object],
    kind: str,
    extra_columns: tuple[str, ...],
    batch_rows: int,
    only_if_empty: bool,
    replace: bool,
) -> ImportResult | None:
    path = Path(path)
    try:
        fh = path.open(encoding="utf-8-sig", newline="")
    except OSError as err:
        raise ImportFileError(
            f"cannot read {str(path)!r}: {err.strerror}", hint="check the file name"
        ) from None
    instance_ids: dict[InstanceKey, int] = {}
    rows = 0
    try:
        with fh, store.writing(engine) as conn:
            if only_if_empty and has_prices(conn):
                return None  # another process filled it while we waited for the write lock
            run_id = store.start_run(conn, provider="*", kind=kind, source=path.name)
            reader = _RowReader(fx)
            records = _parse(fh, path.name, reader, extra_columns)
            stored = PriceBatches(conn, run_id)
            corrections: list[tuple[int, Correction]] = []  # (file line, correction)
            while batch := list(islice(records, batch_rows)):
                lines = reader.take_lines()
                instance_ids.update(store.upsert_instances(conn, reader.take_new_instances()))
                stored.append(batch, instance_ids)
                rows += len(batch)
                if len(stored.corrections) > len(corrections):  # rare: look their lines up
                    line_of = {id(record): line for record, line in zip(batch, lines, strict=True)}
                    corrections.extend(
                        (line_of[id(c.record)], c) for c in stored.corrections[len(corrections) :]
                    )
            if corrections and not replace:
                raise ImportFileError(_conflicts_message(path.name, corrections), hint=CONFLICT_HINT)
            notes = None
            if corrections:
                given = [c for c in CORRECTABLE_COLUMNS if c in reader.columns]
                if "tiers" not in given:
                    _check_kept_tiers(conn, path.name, corrections)
                replace_corrections(conn, [c for _, c in corrections], run_id, given)
                notes = _replaced_notes(corrections)
            changed = stored.changed
            if reader.snapshot_keys:
                _into_snapshot_run(conn, run_id, reader.snapshot_keys, instance_ids, path.name)
            if reader.stock:
                rows_stock = list(reader.stock.values())
                store.insert_availability(conn, rows_stock, instance_ids, run_id)
            store.finish_run(
                conn,
                run_id,
                RunStatus.OK,
                offers_seen=rows,
                prices_stored=stored.stored + len(corrections),
                prices_changed=changed,
                notes=notes,
            )
    except UnicodeDecodeError:
        line = _first_bad_utf8_line(path)
        raise ImportFileError(
            f"{path.name}: line {line}: not UTF-8 text", hint="save the file as UTF-8"
        ) from None
    except InstanceConflict as err:
        first = reader.first_line.get(err.key)
        where = f"{path.name}: line {first}" if first else path.name
        raise ImportFileError(f"{where}: {err}", hint="an instance type keeps its GPU; fix the row") from None
    return ImportResult(
        rows=rows,
        stored=stored.stored,
        changed=changed,
        already_present=stored.already_present - len(corrections),
        instances=len(instance_ids),
        run_id=run_id,
        replaced=len(corrections),
    )


CONFLICT_HINT = Phrase(
    "to correct them, import the file again with {replace}: it stores this file's prices, changing only "
    "the columns the file has, and keeps every old row whole in the price_corrections table"
)
MAX_LISTED = 20  # conflicts named in an error, replacements in a run's notes; the rest are counted


def _conflict_text(line: int, correction: Correction) -> str:
    record = correction.record
    return (
        f"line {line}: {'/'.join(record.instance)} {record.billing} {record.observed_on.isoformat()} is stored "
        f"at {correction.stored_price.normalize():f}, this file says {record.price.normalize():f}"
    )


def _conflicts_message(name: str, corrections: list[tuple[int, Correction]]) -> str:
    listed = "; ".join(_conflict_text(line, c) for line, c in corrections[:MAX_LISTED])
    more = f"; and {len(corrections) - MAX_LISTED} more" if len(corrections) > MAX_LISTED else ""
    return (
        f"{name}: {len(corrections)} price(s) differ from the one stored for the same instance, billing "
        f"mode and day; nothing imported: {listed}{more}"
    )


def _check_kept_tiers(conn: Connection, name: str, corrections: list[tuple[int, Correction]]) -> None:
    """A correction whose file has no tiers column keeps the stored tiers: each must still be within
    tenfold of the corrected price (the rule of any tier); ImportFileError naming the line if not."""
    kept = stored_tiers(conn, [c.key for _, c in corrections])
    for line, c in corrections:
        steps = json.loads(kept.get(c.key) or "[]")
        far = [p for _, p in steps if is_suspicious_move(c.record.price, Decimal(str(p)))]
        if far:
            raise ImportFileError(
                f"{name}: line {line}: {'/'.join(c.record.instance)} {c.record.billing} would keep its stored "
                f"tiers {kept[c.key]}, more than tenfold away from the corrected price "
                f"{c.record.price.normalize():f}; nothing imported",
                hint="add a tiers column to the file (empty for none) so the correction sets them too",
            )


def _replaced_notes(corrections: list[tuple[int, Correction]]) -> str:
    """The run's note: how many it replaced and the first few; every old row is in price_corrections."""
    lines = [
        f"replaced {len(corrections)} stored price(s) (old -> new); every old row is kept whole in the "
        "price_corrections table (run_id = this run):"
    ]
    for line, c in corrections[:MAX_LISTED]:
        lines.append(
            _conflict_text(line, c).replace(" is stored at ", " was ").replace(", this file says ", " -> ")
        )
    if len(corrections) > MAX_LISTED:
        lines.append(f"and {len(corrections) - MAX_LISTED} more")
    return "\n".join(lines)


def _first_bad_utf8_line(path: Path) -> int:
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return 1


def _parse(fh: IO[str], name: str, rows: _RowReader, extra_columns: tuple[str, ...]) -> Iterator[PriceRecord]:
    reader = csv.reader(fh)
    try:
        header = next(reader)
    except StopIteration:
        raise ImportFileError(
            f"{name}: the file is empty", hint=f"the header row is: {','.join(IMPORT_COLUMNS)}"
        ) from None
    except csv.Error as err:
        raise ImportFileError(f"{name}: line 1: {err}") from None
    columns = _check_header(header, name, extra_columns)
    rows.set_columns(columns)
    width = len(columns)
    read = rows.read
    lines = rows.lines
    try:
        for fields in reader:
            rows.line = reader.line_num
            if len(fields) != width:
                if not any(f.strip() for f in fields):
                    continue
                raise ImportFileError(
                    f"{name}: line {reader.line_num}: expected {width} fields, found {len(fields)}",
                    hint='a field holding a comma must be quoted ("12,948.50"); nothing was stored',
                )
            try:
                record = read(fields)
            except (PriceRejected, PlannerError) as err:
                message = err.message if isinstance(err, PlannerError) else str(err)
                hint = err.hint if isinstance(err, PlannerError) else None
                raise ImportFileError(
                    f"{name}: line {reader.line_num}: {message}", hint=hint or ROW_HINT
                ) from None
            if record is not None:  # None: a blank row
                lines.append(reader.line_num)
                yield record
    except csv.Error as err:
        raise ImportFileError(f"{name}: line {reader.line_num}: {err}") from None


def _check_header(header: list[str], name: str, extra_columns: tuple[str, ...]) -> list[str]:
    columns = [h.strip().lower() for h in header]
    allowed = set(EXPORT_COLUMNS) | set(extra_columns)
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise ImportFileError(f"{name}: line 1: duplicate column {duplicates[0]!r}")
    unknown = [c for c in columns if c not in allowed]
    if unknown:
        raise ImportFileError(
            f"{name}: line 1: unknown column {unknown[0]!r}",
            hint=f"the columns are: {','.join(IMPORT_COLUMNS)}",
        )
    missing = [c for c in IMPORT_REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ImportFileError(
            f"{name}: line 1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
            hint=f"the columns are: {','.join(IMPORT_COLUMNS)}",
        )
    return columns


class _RowReader:
    """Checks rows one at a time and turns them into price records.

    A long file repeats the same instance, billing mode, currency and source on every night, the same
    date on every instance, and often the same price night after night. ``check`` is the full check of
    one row. Each distinct combination of the columns other than price and date, and each distinct
    date, is remembered once a row carrying it has passed that check; so is the last price of each
    combination. A row whose combination and date are known only needs its price checked, by the same
    functions ``check`` uses (none when it repeats the last one); a row with anything new or wrong goes
    through ``check``, which names its first problem exactly as it always has.
    """

    def __init__(self, fx: Mapping[str, object]):
        self.fx = fx
        self.columns: list[str] = []
        self._provider: dict[str, str] = {}
        self._gpu: dict[str, str] = {}
        self._count: dict[str, float] = {}
        self._billing: dict[str, tuple[str, str]] = {}
        self._rate: dict[str, Decimal] = {}
        self._offers: dict[tuple[str, ...], _Offer] = {}
        self._when: dict[str, tuple[dt.datetime, dt.date]] = {}
        self._instances: dict[InstanceKey, InstanceRow] = {}
        self._new_instances: list[InstanceRow] = []
        self.line = 0  # the file line being read, set by _parse
        self.lines: list[int] = []  # the line of each record yielded since the last take_lines
        self.first_line: dict[InstanceKey, int] = {}  # where each instance first appears
        # The newest stock of each instance and billing mode in the file (the stock_status columns).
        self.stock: dict[tuple[InstanceKey, str], AvailabilityRow] = {}
        # The (instance, billing, day) of every row marked from_snapshot: stored in a snapshot run.
        self.snapshot_keys: set[tuple[InstanceKey, str, dt.date]] = set()

    def set_columns(self, columns: list[str]) -> None:
        self.columns = columns
        self._price_at = columns.index("price")
        self._when_at = columns.index("observed_at")
        self._combination = itemgetter(
            *(i for i, c in enumerate(columns) if c not in ("price", "observed_at"))
        )

    def take_lines(self) -> list[int]:
        """The file line of each record yielded since the last call, in order."""
        lines = self.lines[:]
        self.lines.clear()  # the same list object: _parse appends to it
        return lines

    def take_new_instances(self) -> list[InstanceRow]:
        """The instances first seen since the last call, in file order (the first row of each wins)."""
        new, self._new_instances = self._new_instances, []
        return new

    def read(self, fields: list[str]) -> PriceRecord | None:
        """The record of one row (None for a blank row); PriceRejected or PlannerError if it is bad."""
        try:
            offer = self._offers[self._combination(fields)]
            observed_at, observed_on = self._when[fields[self._when_at]]
        except KeyError:
            return self.check(fields)
        text = fields[self._price_at]
        if text != offer.text:
            if len(text) > MAX_FIELD_CHARS:
                return self.check(fields)
            try:
                price = parse_price(text)
                cny = cny_per_gpu_hour(price, offer.rate, offer.billing, offer.gpu_count, offer.gpu_model)
            except PriceRejected:
                return self.check(fields)
            offer.text, offer.price, offer.cny = text, price, cny
        if offer.stock is not None:
            self._keep_stock(offer, observed_at)
        if offer.snapshot:
            self.snapshot_keys.add((offer.key, offer.billing, observed_on))
        return PriceRecord(
            offer.key,
            offer.billing,
            observed_at,
            observed_on,
            offer.price,
            offer.currency,
            offer.unit,
            offer.cny,
            offer.source,
            offer.tiers,
            offer.median,
            offer.confirmed,
            offer.unlisted,
        )

    def check(self, fields: list[str]) -> PriceRecord | None:
        """The full check of one row, column by column; remembers what passed."""
        if not any(f.strip() for f in fields):
            return None
        record = dict(zip(self.columns, fields, strict=True))
        for column, value in record.items():
            if len(value) > MAX_FIELD_CHARS:
                raise PriceRejected(f"{column} is longer than {MAX_FIELD_CHARS} characters")
            if column in IMPORT_REQUIRED_COLUMNS and not value.strip():
                raise PriceRejected(f"{column} is empty")
            if CONTROL.search(value):  # C0, DEL or C1 (NUL, tab, newline, CSI...): a broken file
                raise PriceRejected(f"{column} contains a control character")
        record = {column: without_invisible(value) for column, value in record.items()}
        region = check_name("region", record["region"], MAX_FIELD_CHARS)
        instance_type = check_name("instance_type", record["instance_type"], MAX_FIELD_CHARS)
        provider = _cached(self._provider, record["provider"], canonical_provider)
        gpu_model = _cached(self._gpu, record["gpu_model"], catalog.canonical_name)
        gpu_count = _cached(self._count, record["gpu_count"], check_gpu_count)
        billing, unit = _cached(self._billing, record["billing"], billing_and_unit)
        currency = record["currency"].strip().upper()
        rate = _cached(self._rate, currency, lambda c: fx_rate(c, self.fx))
        observed_at = parse_observed_at(record["observed_at"])
        price = parse_price(record["price"])
        instance = InstanceRow(
            provider=provider,
            region=region,
            instance_type=instance_type,
            gpu_model=gpu_model,
            gpu_count=gpu_count,
            vcpus=_optional_int(record.get("vcpus"), "vcpus"),
            memory_gb=_optional_float(record.get("memory_gb"), "memory_gb"),
            gpu_note=_free_text(record.get("gpu_note")),
        )
        cny = cny_per_gpu_hour(price, rate, billing, gpu_count, gpu_model)
        source = _free_text(record.get("source"))
        tiers = _tiers(record.get("tiers"), price, rate, billing, gpu_count, gpu_model)
        median = parse_price(record["median_price"]) if (record.get("median_price") or "").strip() else None
        if median is not None:  # a marketplace's median listing: as plausible as any price
            try:
                cny_per_gpu_hour(median, rate, billing, gpu_count, gpu_model)
            except PriceRejected as err:
                raise PriceRejected(str(err).replace("price", "median_price", 1)) from None
        stock = _stock(record)
        key = instance.key
        known = self._instances.get(key)
        if known is None:
            self._instances[key] = instance
            self._new_instances.append(instance)
            self.first_line[instance.key] = self.line
        elif (known.gpu_model, known.gpu_count) != (gpu_model, gpu_count):
            raise PriceRejected(
                f"{'/'.join(key)} was {known.gpu_count:g}x {known.gpu_model} "
                f"earlier in the file, here {gpu_count:g}x {gpu_model}"
            )
        offer = _Offer(
            key, billing, currency, unit, source, rate, gpu_count, gpu_model, record["price"], price, cny
        )
        offer.tiers, offer.median, offer.stock = tiers, median, stock
        offer.confirmed = _optional_moment(record.get("confirmed_at"), "confirmed_at", observed_at)
        offer.unlisted = _optional_moment(record.get("unlisted_at"), "unlisted_at", None)
        offer.snapshot = _flag(record.get("from_snapshot"), "from_snapshot")
        if offer.snapshot:
            self.snapshot_keys.add((key, billing, observed_at.date()))
        self._offers[self._combination(fields)] = offer
        self._when[record["observed_at"]] = (observed_at, observed_at.date())
        if stock is not None:
            self._keep_stock(offer, observed_at)
        return PriceRecord(
            key,
            billing,
            observed_at,
            observed_at.date(),
            price,
            currency,
            unit,
            cny,
            source,
            tiers,
            median,
            offer.confirmed,
            offer.unlisted,
        )

    def _keep_stock(self, offer: _Offer, observed_at: dt.datetime) -> None:
        known = self.stock.get((offer.key, offer.billing))
        if known is None or known.observed_at <= observed_at:
            assert offer.stock is not None
            self.stock[(offer.key, offer.billing)] = AvailabilityRow(
                offer.key, offer.billing, observed_at, *offer.stock
            )


class _Offer:
    """A checked combination of instance, billing mode, currency and source, and its last price."""

    __slots__ = (
        "key",
        "billing",
        "currency",
        "unit",
        "source",
        "rate",
        "gpu_count",
        "gpu_model",
        "text",
        "price",
        "cny",
        "tiers",
        "median",
        "stock",
        "confirmed",
        "unlisted",
        "snapshot",
    )

    def __init__(
        self,
        key: InstanceKey,
        billing: str,
        currency: str,
        unit: str,
        source: str | None,
        rate: Decimal,
        gpu_count: float,
        gpu_model: str,
        text: str,
        price: Decimal,
        cny: Decimal,
    ):
        self.key, self.billing, self.currency, self.unit, self.source = key, billing, currency, unit, source
        self.rate, self.gpu_count, self.gpu_model = rate, gpu_count, gpu_model
        self.text, self.price, self.cny = text, price, cny  # the last price seen, as written and checked
        self.tiers: str | None = None  # as stored in prices.tiers
        self.median: Decimal | None = None
        # status, idle, total and orderable GPUs
        self.stock: StockCells | None = None
        self.confirmed: dt.datetime | None = None  # the confirmed_at column
        self.unlisted: dt.datetime | None = None  # the unlisted_at column
        self.snapshot = False  # the from_snapshot column


def _into_snapshot_run(
    conn: Connection,
    run_id: int,
    keys: set[tuple[InstanceKey, str, dt.date]],
    instance_ids: Mapping[InstanceKey, int],
    name: str,
) -> None:
    """Move the prices this import stored from rows marked from_snapshot into a run of kind snapshot,
    as the bundled snapshot's own load stores them: an export of snapshot rows imported elsewhere
    stays the snapshot (never news for alerts, named as such by every answer)."""
    snapshot = store.start_run(
        conn, provider="*", kind="snapshot", source=f"{name} (rows marked from_snapshot)"
    )
    moved = move_to_run(conn, run_id, snapshot, [(instance_ids[k], b, d) for k, b, d in keys])
    store.finish_run(conn, snapshot, RunStatus.OK, offers_seen=len(keys), prices_stored=moved)


def _optional_moment(value: str | None, column: str, not_before: dt.datetime | None) -> dt.datetime | None:
    """An optional time column (confirmed_at, unlisted_at) as naive UTC; a confirmation before the
    first sighting is refused."""
    if not (value or "").strip():
        return None
    try:
        moment = parse_observed_at(value or "")
    except PriceRejected as err:
        raise PriceRejected(str(err).replace("observed_at", column, 1)) from None
    if not_before is not None and moment < not_before:
        raise PriceRejected(f"{column} {value!r} is before observed_at (when the price was first seen)")
    return moment


_FLAGS = {"": False, "false": False, "0": False, "no": False, "true": True, "1": True, "yes": True}


def _flag(value: str | None, column: str) -> bool:
    try:
        return _FLAGS[(value or "").strip().lower()]
    except KeyError:
        raise PriceRejected(f"{column} {value!r} is not true or false") from None


def _cached(memo: dict, key: str, check):  # noqa: ANN001, ANN202 - a tiny memo over a checking function
    try:
        return memo[key]
    except KeyError:
        value = memo[key] = check(key)
        return value


def parse_observed_at(value: str, now: dt.datetime | None = None) -> dt.datetime:
    """An ISO date or datetime as naive UTC; a date means midnight UTC. From 2000 to now: a price
    observed in the future would stand for a day that has not come (and block that day's refresh)."""
    text = value.strip()
    try:
        if len(text) == 10:
            moment = dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
        else:
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise PriceRejected(f"observed_at {value!r} is not an ISO date (2026-11-30) or datetime") from None
    now = now or store.utcnow()
    if moment.year < 2000:  # checked before the offset is applied: year 1 -05:00 overflows
        raise PriceRejected(f"observed_at {value!r} is before 2000")
    if moment.year > now.year + 1:  # likewise year 9999 +14:00
        raise PriceRejected(f"observed_at {value!r} is in the future")
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    if moment > now + CLOCK_SKEW:
        raise PriceRejected(
            f"observed_at {value!r} is in the future (it is now {now.isoformat(timespec='minutes')} UTC)"
        )
    return moment


CLOCK_SKEW = dt.timedelta(minutes=5)  # a clock a little ahead of ours is not the future


def _free_text(value: str | None) -> str | None:
    """A source or GPU note as written; a leading quote that ``export`` put before a formula character
    (``'=1+1``, see ``reports.cells.neutralise``) is taken off again, so export -> import is lossless."""
    text = (value or "").strip()
    if text[:1] == "'" and text[1:].startswith(FORMULA_PREFIXES):
        text = text[1:]
    return text or None


def _tiers(
    value: str | None, price: Decimal, rate: Decimal, billing: str, gpu_count: float, gpu_model: str
) -> str | None:
    """The ``tiers`` column (JSON ``[[from_hour, "price"], ...]``), each step checked like any price."""
    text = (value or "").strip()
    if not text:
        return None
    if billing not in HOURLY_MODES:
        raise PriceRejected(f"tiers are for hourly billing, not {billing}")
    try:
        steps = json.loads(text)
        pairs = [(hour, parse_price(step_price)) for hour, step_price in steps]
    except (ValueError, TypeError):
        raise PriceRejected(f"tiers {text[:40]!r} is not a list of [from_hour, price]") from None
    checked = sorted(check_tier(hour, p, price, rate, billing, gpu_count, gpu_model) for hour, p in pairs)
    return json.dumps([[hour, str(p)] for hour, p in checked]) if checked else None


# (status, idle, total, orderable, most idle on one machine, most orderable on one machine)
StockCells = tuple[str | None, int | None, int | None, int | None, int | None, int | None]
_COUNT_COLUMNS = (
    "idle_gpus",
    "total_gpus",
    "orderable_gpus",
    "max_idle_gpus_per_machine",
    "max_orderable_gpus_per_machine",
)


def _stock(record: Mapping[str, str]) -> StockCells | None:
    """(status, idle, total, orderable GPUs, most idle and most orderable on one machine) from the stock
    columns, in the order of ``AvailabilityRow``; None when the row says nothing of stock."""
    status = (record.get("stock_status") or "").strip() or None
    if status is not None and status not in STORED_STOCK_STATUSES:
        raise PriceRejected(f"stock_status {status[:20]!r} is not one of {', '.join(STORED_STOCK_STATUSES)}")
    idle, total, orderable, most_idle, most_orderable = (
        _optional_int(record.get(column), column) for column in _COUNT_COLUMNS
    )
    cells: StockCells = (status, idle, total, orderable, most_idle, most_orderable)
    return None if all(c is None for c in cells) else cells


def _optional_int(value: str | None, column: str) -> int | None:
    if value is None or not value.strip():
        return None
    number = parse_decimal(value)
    if number is None or not number.is_finite() or number != number.to_integral_value():
        raise PriceRejected(f"{column} {value[:30]!r} is not a whole number")
    if number < 0:
        raise PriceRejected(f"{column} {value[:30]!r} is negative")
    if number > MAX_COUNT:
        raise PriceRejected(f"{column} {value[:30]!r} is out of range (at most {MAX_COUNT:,})")
    return int(number)


def _optional_float(value: str | None, column: str) -> float | None:
    if value is None or not value.strip():
        return None
    number = parse_decimal(value)
    if number is None:
        raise PriceRejected(f"{column} {value[:30]!r} is not a number")
    if not (number.is_finite() and 0 <= number < 10**7):
        raise PriceRejected(f"{column} {value[:30]!r} is out of range")
    return float(number)
