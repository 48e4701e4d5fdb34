"""Printing rows as a table for people, or as JSON or CSV for programs. One place for all commands."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from planner.text import printable
from reports.cells import neutralise  # the one formula rule, shared with the reports' files
from vocab import iso_time, sheet_number, sheet_time

FORMATS = ("table", "json", "csv")


def to_jsonable(value: Any) -> Any:
    """The one way every JSON output writes a value, recursively (CSV for people starts from it and
    then spells times and money for a spreadsheet, :func:`csv_text`): a whole number as an integer
    (a count is 8, not 8.0), other Decimals and floats as numbers, a timestamp as ISO 8601 in UTC with
    ``Z`` (:func:`iso_time`), a date as YYYY-MM-DD, booleans as JSON's true/false;
    text loses control and invisible characters; a number that is not finite becomes None (JSON has no
    Infinity or NaN)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return printable(value, keep_lines=True)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 1e15 else value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        return int(value) if value == value.to_integral_value() and abs(value) < 1e15 else float(value)
    if isinstance(value, dt.datetime):
        return iso_time(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


def dumps_json(value: Any) -> str:
    """Always valid JSON (``allow_nan=False`` would rather fail than print ``Infinity``)."""
    return json.dumps(to_jsonable(value), ensure_ascii=False, indent=2, allow_nan=False)


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """``rows`` as CSV text with a header row, for people's spreadsheets: text cells printable and
    neutralised against formulas, times as ``2026-11-30 02:00:00`` in UTC (:func:`vocab.sheet_time`),
    money to its places (:func:`vocab.sheet_number`: a price column per hour where the row's ``unit``
    is ``hour``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        unit = row.get("unit")
        writer.writerow([_cell_csv(c, row.get(c), unit if isinstance(unit, str) else None) for c in columns])
    return buf.getvalue()


# A UTC time as iso_time spells it: records spell their times for JSON in their to_dict
# (``Offer.to_dict``, ``Stock.to_dict``), and a spreadsheet reads that spelling as text.
_ISO_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")


def _cell_csv(column: str, value: Any, unit: str | None = None) -> Any:
    if isinstance(value, dt.datetime):
        return sheet_time(value)
    if isinstance(value, str) and _ISO_UTC.fullmatch(value):
        return sheet_time(dt.datetime.fromisoformat(value))
    value = to_jsonable(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return sheet_number(column, value, unit) or value
    if isinstance(value, dict | list):
        return neutralise(json.dumps(value, ensure_ascii=False, allow_nan=False))
    return neutralise(value)


def table(rows: Sequence[Sequence[str]], headers: Sequence[str], align_right: Iterable[int] = ()) -> str:
    """A plain aligned text table; CJK characters count double so columns line up in a terminal."""
    right = set(align_right)
    headers = [printable(h) for h in headers]
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [display_width(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], display_width(cell))

    def line(cells: Sequence[str]) -> str:
        parts = []
        for i, cell in enumerate(cells):
            pad = " " * (widths[i] - display_width(cell))
            parts.append(pad + cell if i in right else cell + pad)
        return "  ".join(parts).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def money(value: Decimal | None, places: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:,.{places}f}"


def short(text: str | None, width: int) -> str:
    if not text:
        return "-"
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_run(when: dt.datetime, timezone: str) -> str:
    """A scheduled run for people: ``2026-12-01 02:00 Asia/Shanghai (UTC+08:00)``."""
    offset = when.strftime("%z")
    return f"{when:%Y-%m-%d %H:%M} {timezone} (UTC{offset[:3]}:{offset[3:]})"
