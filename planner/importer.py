"""``planner import``: a CSV file of prices into the database, atomically.

Columns (header row, any order): required ``provider, region, instance_type, gpu_model, gpu_count,
billing, price, currency, observed_at``; optional ``vcpus, memory_gb, source``. ``price`` is the price
of the whole instance for one unit of ``billing``. Rows are checked and written in batches inside one
transaction: the first bad row stops the import with its line number (the header is line 1) and the
transaction is rolled back, so nothing of the file is stored. Re-importing a file adds nothing: one
observation per instance, billing mode and day.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import IO

from sqlalchemy.engine import Engine

from db import store
from db.bulk import PriceBatches, PriceRecord
from db.store import InstanceConflict, InstanceKey, InstanceRow
from planner import catalog
from planner.errors import PlannerError, UsageError
from planner.normalize import (
    PriceRejected,
    billing_and_unit,
    check_gpu_count,
    cny_per_gpu_hour,
    fx_rate,
    parse_price,
)
from planner.providers import canonical_provider
from vocab import RunStatus

REQUIRED_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "billing",
    "price",
    "currency",
    "observed_at",
)
OPTIONAL_COLUMNS = ("vcpus", "memory_gb", "source")
COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
MAX_FIELD_CHARS = 500
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # NUL, tab, newline...: never part of a name or number
BATCH_ROWS = 20_000  # rows checked and written at a time inside the one transaction
csv.field_size_limit(1_000_000)  # a huge field is reported by our own check, with its line number


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


def import_csv(
    engine: Engine,
    path: str | os.PathLike[str],
    fx: Mapping[str, object],
    kind: str = "import",
    extra_columns: tuple[str, ...] = (),
    batch_rows: int = BATCH_ROWS,
) -> ImportResult:
    """Check and store every row of ``path`` in one transaction inside a run of ``kind``.

    Rows are read and written in batches, so memory stays flat however long the file; a bad row
    anywhere rolls the whole transaction back, so nothing of the file is stored.
    """
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
        with fh, engine.begin() as conn:
            run_id = store.start_run(conn, provider="*", kind=kind, source=path.name)
            reader = _RowReader(fx)
            records = _parse(fh, path.name, reader, extra_columns)
            stored = PriceBatches(conn, run_id)
            while batch := list(islice(records, batch_rows)):
                instance_ids.update(store.upsert_instances(conn, reader.take_new_instances()))
                stored.append(batch, instance_ids)
                rows += len(batch)
            changed = stored.changed
            store.finish_run(
                conn,
                run_id,
                RunStatus.OK,
                offers_seen=rows,
                prices_stored=stored.stored,
                prices_changed=changed,
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
        already_present=stored.already_present,
        instances=len(instance_ids),
        run_id=run_id,
    )


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
            f"{name}: the file is empty", hint=f"the header row is: {','.join(COLUMNS)}"
        ) from None
    except csv.Error as err:
        raise ImportFileError(f"{name}: line 1: {err}") from None
    columns = _check_header(header, name, extra_columns)
    rows.set_columns(columns)
    width = len(columns)
    read = rows.read
    try:
        for fields in reader:
            rows.line = reader.line_num
            if len(fields) != width:
                if not any(f.strip() for f in fields):
                    continue
                raise ImportFileError(
                    f"{name}: line {reader.line_num}: expected {width} fields, found {len(fields)}"
                )
            try:
                record = read(fields)
            except (PriceRejected, PlannerError) as err:
                message = err.message if isinstance(err, PlannerError) else str(err)
                hint = err.hint if isinstance(err, PlannerError) else None
                raise ImportFileError(f"{name}: line {reader.line_num}: {message}", hint=hint) from None
            if record is not None:  # None: a blank row
                yield record
    except csv.Error as err:
        raise ImportFileError(f"{name}: line {reader.line_num}: {err}") from None


def _check_header(header: list[str], name: str, extra_columns: tuple[str, ...]) -> list[str]:
    columns = [h.strip().lower() for h in header]
    allowed = set(COLUMNS) | set(extra_columns)
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise ImportFileError(f"{name}: line 1: duplicate column {duplicates[0]!r}")
    unknown = [c for c in columns if c not in allowed]
    if unknown:
        raise ImportFileError(
            f"{name}: line 1: unknown column {unknown[0]!r}", hint=f"the columns are: {','.join(COLUMNS)}"
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise ImportFileError(
            f"{name}: line 1: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
            hint=f"the columns are: {','.join(COLUMNS)}",
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
        self.first_line: dict[InstanceKey, int] = {}  # where each instance first appears

    def set_columns(self, columns: list[str]) -> None:
        self.columns = columns
        self._price_at = columns.index("price")
        self._when_at = columns.index("observed_at")
        self._combination = itemgetter(
            *(i for i, c in enumerate(columns) if c not in ("price", "observed_at"))
        )

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
                cny = cny_per_gpu_hour(price, offer.rate, offer.billing, offer.gpu_count)
            except PriceRejected:
                return self.check(fields)
            offer.text, offer.price, offer.cny = text, price, cny
        return (
            offer.key,
            offer.billing,
            observed_at,
            observed_on,
            offer.price,
            offer.currency,
            offer.unit,
            offer.cny,
            offer.source,
            None,
            None,
        )

    def check(self, fields: list[str]) -> PriceRecord | None:
        """The full check of one row, column by column; remembers what passed."""
        if not any(f.strip() for f in fields):
            return None
        record = dict(zip(self.columns, fields, strict=True))
        for column, value in record.items():
            if len(value) > MAX_FIELD_CHARS:
                raise PriceRejected(f"{column} is longer than {MAX_FIELD_CHARS} characters")
            if column in REQUIRED_COLUMNS and not value.strip():
                raise PriceRejected(f"{column} is empty")
            if _CONTROL.search(value):
                raise PriceRejected(f"{column} contains a control character")
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
            region=record["region"].strip(),
            instance_type=record["instance_type"].strip(),
            gpu_model=gpu_model,
            gpu_count=gpu_count,
            vcpus=_optional_int(record.get("vcpus"), "vcpus"),
            memory_gb=_optional_float(record.get("memory_gb"), "memory_gb"),
            gpu_note=(record.get("gpu_note") or "").strip() or None,
        )
        cny = cny_per_gpu_hour(price, rate, billing, gpu_count)
        source = (record.get("source") or "").strip() or None
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
        offer = _Offer(key, billing, currency, unit, source, rate, gpu_count, record["price"], price, cny)
        self._offers[self._combination(fields)] = offer
        self._when[record["observed_at"]] = (observed_at, observed_at.date())
        return (key, billing, observed_at, observed_at.date(), price, currency, unit, cny, source, None, None)


class _Offer:
    """A checked combination of instance, billing mode, currency and source, and its last price."""

    __slots__ = ("key", "billing", "currency", "unit", "source", "rate", "gpu_count", "text", "price", "cny")

    def __init__(
        self,
        key: InstanceKey,
        billing: str,
        currency: str,
        unit: str,
        source: str | None,
        rate: Decimal,
        gpu_count: float,
        text: str,
        price: Decimal,
        cny: Decimal,
    ):
        self.key, self.billing, self.currency, self.unit, self.source = key, billing, currency, unit, source
        self.rate, self.gpu_count = rate, gpu_count
        self.text, self.price, self.cny = text, price, cny  # the last price seen, as written and checked


def _cached(memo: dict, key: str, check):  # noqa: ANN001, ANN202 - a tiny memo over a checking function
    try:
        return memo[key]
    except KeyError:
        value = memo[key] = check(key)
        return value


def parse_observed_at(value: str) -> dt.datetime:
    """An ISO date or datetime as naive UTC; a date means midnight UTC. Not more than a day ahead."""
    text = value.strip()
    try:
        if len(text) == 10:
            moment = dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
        else:
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise PriceRejected(f"observed_at {value!r} is not an ISO date (2026-11-30) or datetime") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    if moment > store.utcnow() + dt.timedelta(days=1):
        raise PriceRejected(f"observed_at {value!r} is in the future")
    if moment.year < 2000:
        raise PriceRejected(f"observed_at {value!r} is before 2000")
    return moment


def _optional_int(value: str | None, column: str) -> int | None:
    if value is None or not value.strip():
        return None
    try:
        number = int(value.strip())
    except ValueError:
        raise PriceRejected(f"{column} {value!r} is not a whole number") from None
    if number < 0:
        raise PriceRejected(f"{column} {value!r} is negative")
    return number


def _optional_float(value: str | None, column: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        number = float(value.strip())
    except ValueError:
        raise PriceRejected(f"{column} {value!r} is not a number") from None
    if not 0 <= number < 1e7:
        raise PriceRejected(f"{column} {value!r} is out of range")
    return number
