"""Every stored price observation as CSV in the import format (``planner export``).

``write_export(engine, fh, gpu_models, providers)`` streams the rows to an open text file and returns
how many; each cell is formatted by its column's name (``export_cells``), never by its position.
"""

from __future__ import annotations

import contextlib
import csv
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import Engine

from planner.errors import UsageError, write_error
from planner.output import to_jsonable
from reports.cells import neutralise
from reports.files import is_special, written_whole
from vocab import EXPORT_COLUMNS, iso_time

# How a column's value is written where ``str`` is not what import reads back.
FORMATS = {
    "gpu_count": lambda v: f"{v:g}",  # 8.0 -> 8, 0.5 -> 0.5
    "price": to_jsonable,  # a Decimal without exponent or trailing zeros' noise
    "median_price": to_jsonable,
    "observed_at": iso_time,  # UTC, with its Z
    "confirmed_at": iso_time,
    "unlisted_at": iso_time,
    "from_snapshot": lambda v: "true" if v else "false",
}


def export_cells(row: Mapping[str, Any]) -> list[Any]:
    """One stored observation (a mapping with the EXPORT_COLUMNS) as the cells of a CSV line: empty for
    None, text a spreadsheet would run as a formula quoted (import takes the quote off again)."""
    cells = []
    for column in EXPORT_COLUMNS:
        value = row[column]
        if value is not None and column in FORMATS:
            value = FORMATS[column](value)
        cells.append("" if value is None else neutralise(value))
    return cells


def export_lines(
    engine: Engine, gpu_models: Sequence[str] = (), providers: Sequence[str] = ()
) -> Iterator[list[Any]]:
    """The header, then every stored observation (oldest first) of ``gpu_models`` at ``providers``
    (all when empty), streamed."""
    from db.queries import export_rows, latest_prices

    yield list(EXPORT_COLUMNS)
    with engine.connect() as conn:
        models, names = list(gpu_models) or None, list(providers) or None
        # An offer its provider no longer lists (by its latest refresh: db.catalogue) is written so on
        # its latest row, so the file says so where there is no refresh to judge it.
        gone = {
            (p.provider, p.region, p.instance_type, p.billing, p.observed_at): p.unlisted_at
            for p in latest_prices(conn, models, names)
            if p.unlisted_at is not None
        }
        for row in export_rows(conn, models, names):
            cells = dict(row._mapping)
            key = (cells["provider"], cells["region"], cells["instance_type"], cells["billing"])
            cells["unlisted_at"] = gone.get((*key, cells["observed_at"]), cells["unlisted_at"])
            yield export_cells(cells)


def write_export(
    engine: Engine, fh: TextIO, gpu_models: Sequence[str] = (), providers: Sequence[str] = ()
) -> int:
    """Write the export to ``fh``; returns the observations written (the header not counted)."""
    writer = csv.writer(fh, lineterminator="\n")
    count = -1
    for line in export_lines(engine, gpu_models, providers):
        writer.writerow(line)
        count += 1
    return count


def export_to_path(
    engine: Engine, out: str, gpu_models: Sequence[str] = (), providers: Sequence[str] = ()
) -> int:
    """Write the export to the file ``out`` names: a regular file through a temporary one beside it,
    renamed when whole (so it is whole or untouched); a FIFO or a terminal (``/dev/stdout``) in place.
    Anything else that is not a regular file is a UsageError: writing CSV onto a disk device is never
    meant. A file that cannot be created is named as the user typed it."""
    path = Path(out)
    if is_special(path):
        mode = path.stat().st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise UsageError(
                f"cannot write {str(path)!r}: it is not a regular file, a pipe or a terminal",
                hint="give --out a file name (or leave it out to write to standard output)",
            )
        with open(path, "w", encoding="utf-8", newline="") as fh:
            return write_export(engine, fh, gpu_models, providers)
    with contextlib.ExitStack() as stack:
        try:
            tmp = stack.enter_context(written_whole(path))
        except OSError as err:
            raise write_error(
                f"cannot write {out!r}: {err.strerror}",
                err,
                hint="check that the folder exists and is writable",
            ) from None
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            return write_export(engine, fh, gpu_models, providers)
