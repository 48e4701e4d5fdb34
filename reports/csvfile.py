"""CSV files that people open in Excel: UTF-8 with a byte-order mark, formula injection neutralised.

Excel (and LibreOffice, Google Sheets) run a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a
formula, and a leading tab or carriage return can smuggle one past a first-character check. Text from
providers (instance names, error messages) is not ours to trust, so every *text* cell that begins with
one of those characters gets a single quote in front (OWASP, "CSV Injection"). Number columns are
written as numbers and left alone: -12.5 in a percentage column stays the number -12.5.

Spreadsheets read the cells as values: a time as ``2026-11-30 02:00:00`` (``vocab.sheet_time``: UTC,
which the column's ``_utc`` name says), a date as ``2026-11-30``, money to 2 places and a price per hour
(or per million tokens) under 1 to 4 (``vocab.sheet_places``, by the column's name).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reports.cells import neutralise
from reports.files import written_whole
from vocab import sheet_number, sheet_places, sheet_time

ENCODING = "utf-8-sig"  # UTF-8 with a byte-order mark, so Excel reads Chinese text correctly


def neutralised(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are neutralised; numeric, boolean and date columns untouched."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if (
            pd.api.types.is_numeric_dtype(column)
            or pd.api.types.is_bool_dtype(column)
            or pd.api.types.is_datetime64_any_dtype(column)
        ):
            continue
        out[name] = column.map(neutralise, na_action="ignore")
    return out


def number_text(value: float) -> str:
    """12948.0 -> "12948", 17.7369860 -> "17.736986": at most six places (what the database keeps), for
    a number that is not money (GPUs, GB, seconds)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def as_written(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells as people's spreadsheets read them: booleans ``true``/``false``, timestamps
    ``2026-11-30 02:00:00`` (UTC, :func:`vocab.sheet_time`; a date column stays ``2026-11-30``), and money
    to its places (:func:`vocab.sheet_number`, a price column per hour where its row's ``unit`` is
    ``hour``), not pandas' ``True``, nor 17.736986 CNY."""
    out = frame.copy()
    units = frame["unit"] if "unit" in frame else pd.Series(None, index=frame.index, dtype=object)
    for name in out.columns:
        column = out[name]
        if pd.api.types.is_bool_dtype(column):
            out[name] = column.map(lambda v: "true" if v else "false")
        elif pd.api.types.is_datetime64_any_dtype(column):
            out[name] = column.map(lambda v: sheet_time(v.to_pydatetime()), na_action="ignore")
        elif pd.api.types.is_numeric_dtype(column) and sheet_places(name, 0.0) is not None:
            out[name] = [
                None if pd.isna(v) else sheet_number(name, float(v), u if isinstance(u, str) else None)
                for v, u in zip(column, units, strict=True)
            ]
    return out


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` to ``path`` (header row first), atomically: readers never see half a file."""
    path = Path(path)
    with written_whole(path) as tmp:
        as_written(neutralised(frame)).to_csv(
            tmp, index=False, encoding=ENCODING, lineterminator="\n", float_format=number_text
        )
    return path
