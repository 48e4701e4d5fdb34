"""``planner import``: a CSV file of prices into the database, atomically.

Columns (header row, any order): required ``provider, region, instance_type, gpu_model, gpu_count,
billing, price, currency, observed_at``; optional ``vcpus, memory_gb, source``. ``price`` is the price
of the whole instance for one unit of ``billing``. Every row is checked before anything is stored; the
first bad row stops the import with its line number (the header is line 1) and nothing is written.
Re-importing a file adds nothing: one observation per instance, billing mode and day.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sqlalchemy.engine import Engine

from db import store
from db.store import InstanceConflict, InstanceRow, PriceRow
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
) -> ImportResult:
    """Validate every row of ``path``, then store them in one transaction inside a run of ``kind``."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ImportFileError(
            f"cannot read {str(path)!r}: {err.strerror}", hint="check the file name"
        ) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ImportFileError(
            f"{path.name}: line {line}: not UTF-8 text", hint="save the file as UTF-8"
        ) from None
    instances, price_rows = _parse(io.StringIO(text, newline=""), path.name, fx, extra_columns)
    return store_rows(engine, instances, price_rows, kind=kind, source=path.name)


def store_rows(
    engine: Engine, instances: list[InstanceRow], price_rows: list[PriceRow], kind: str, source: str
) -> ImportResult:
    try:
        with engine.begin() as conn:
            run_id = store.start_run(conn, provider="*", kind=kind, source=source)
            ids = store.upsert_instances(conn, instances)
            counts = store.insert_prices(conn, price_rows, ids, run_id)
            store.finish_run(
                conn,
                run_id,
                "ok",
                offers_seen=len(price_rows),
                prices_stored=counts.stored,
                prices_changed=counts.changed,
            )
    except InstanceConflict as err:
        raise ImportFileError(
            f"{source}: {err}", hint="an instance type keeps its GPU; fix the row"
        ) from None
    return ImportResult(
        rows=len(price_rows),
        stored=counts.stored,
        changed=counts.changed,
        already_present=counts.already_present,
        instances=len(ids),
        run_id=run_id,
    )


def _parse(
    fh: IO[str], name: str, fx: Mapping[str, object], extra_columns: tuple[str, ...]
) -> tuple[list[InstanceRow], list[PriceRow]]:
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
    instances: dict[tuple[str, str, str], InstanceRow] = {}
    price_rows: list[PriceRow] = []
    for line, fields in _rows(reader, name):
        if not any(f.strip() for f in fields):
            continue
        if len(fields) != len(columns):
            raise ImportFileError(f"{name}: line {line}: expected {len(columns)} fields, found {len(fields)}")
        record = dict(zip(columns, fields, strict=True))
        try:
            inst, price = _row(record, fx)
        except (PriceRejected, PlannerError) as err:
            message = err.message if isinstance(err, PlannerError) else str(err)
            hint = err.hint if isinstance(err, PlannerError) else None
            raise ImportFileError(f"{name}: line {line}: {message}", hint=hint) from None
        known = instances.get(inst.key)
        if known is None:
            instances[inst.key] = inst
        elif (known.gpu_model, known.gpu_count) != (inst.gpu_model, inst.gpu_count):
            raise ImportFileError(
                f"{name}: line {line}: {'/'.join(inst.key)} was {known.gpu_count:g}x {known.gpu_model} "
                f"earlier in the file, here {inst.gpu_count:g}x {inst.gpu_model}"
            )
        price_rows.append(price)
    return list(instances.values()), price_rows


def _rows(reader: Iterator[list[str]], name: str) -> Iterator[tuple[int, list[str]]]:
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise ImportFileError(f"{name}: line {reader.line_num}: {err}") from None
        yield reader.line_num, fields


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


def _row(record: dict[str, str], fx: Mapping[str, object]) -> tuple[InstanceRow, PriceRow]:
    for column, value in record.items():
        if len(value) > MAX_FIELD_CHARS:
            raise PriceRejected(f"{column} is longer than {MAX_FIELD_CHARS} characters")
        if column in REQUIRED_COLUMNS and not value.strip():
            raise PriceRejected(f"{column} is empty")
    provider = canonical_provider(record["provider"])
    region = record["region"].strip()
    instance_type = record["instance_type"].strip()
    gpu_model = catalog.canonical_name(record["gpu_model"])
    gpu_count = check_gpu_count(record["gpu_count"])
    billing, unit = billing_and_unit(record["billing"])
    price = parse_price(record["price"])
    currency = record["currency"].strip().upper()
    rate = fx_rate(currency, fx)
    observed_at = parse_observed_at(record["observed_at"])
    instance = InstanceRow(
        provider=provider,
        region=region,
        instance_type=instance_type,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        vcpus=_optional_int(record.get("vcpus"), "vcpus"),
        memory_gb=_optional_float(record.get("memory_gb"), "memory_gb"),
        gpu_note=(record.get("gpu_note") or "").strip() or None,
    )
    price_row = PriceRow(
        instance=instance.key,
        billing=billing,
        price=price,
        currency=currency,
        unit=unit,
        cny_per_gpu_hour=cny_per_gpu_hour(price, rate, billing, gpu_count),
        observed_at=observed_at,
        source=(record.get("source") or "").strip() or None,
    )
    return instance, price_row


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
