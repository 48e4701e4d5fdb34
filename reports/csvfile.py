"""CSV files that people open in Excel: UTF-8 with a byte-order mark, formula injection neutralised.

Excel (and LibreOffice, Google Sheets) run a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a
formula, and a leading tab or carriage return can smuggle one past a first-character check. Text from
providers (instance names, error messages) is not ours to trust, so every *text* cell that begins with
one of those characters gets a single quote in front (OWASP, "CSV Injection"). Number columns are
written as numbers and left alone: -12.5 in a percentage column stays the number -12.5.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reports.cells import neutralise
from reports.files import written_whole
from vocab import iso_time

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
    """12948.0 -> "12948", 17.7369860 -> "17.736986": at most six places (what the database keeps)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def as_written(frame: pd.DataFrame) -> pd.DataFrame:
    """Booleans and timestamps as every planner output writes them (``planner.output.to_jsonable``):
    ``true``/``false`` and ISO 8601 UTC with ``Z``, not pandas' ``True`` and ``2026-11-30 02:00:00``."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if pd.api.types.is_bool_dtype(column):
            out[name] = column.map(lambda v: "true" if v else "false")
        elif pd.api.types.is_datetime64_any_dtype(column):
            out[name] = column.map(lambda v: iso_time(v.to_pydatetime()), na_action="ignore")
    return out


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` to ``path`` (header row first), atomically: readers never see half a file."""
    path = Path(path)
    with written_whole(path) as tmp:
        as_written(neutralised(frame)).to_csv(
            tmp, index=False, encoding=ENCODING, lineterminator="\n", float_format=number_text
        )
    return path
