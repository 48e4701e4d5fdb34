"""Formula injection and timestamps: the rules every CSV (and JSON) the planner writes follows.

Here, in ``reports`` and free of pandas, because the reports' files (``reports.csvfile``) and the
planner's ``--format csv`` and ``export`` (``planner.output``) both need it, and ``reports`` never
imports ``planner``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

# A text cell starting with one of these runs as a formula in Excel, LibreOffice or Google Sheets (a
# leading tab or carriage return can smuggle one past a first-character check); OWASP "CSV Injection".
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``=HYPERLINK("x")`` -> ``'=HYPERLINK("x")``; anything that is not text is returned unchanged.

    Every CSV the planner writes for people goes through this: ``--format csv``, ``export`` and the
    report files. Numbers are not text, so -12.5 stays the number -12.5.
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def iso_time(value: dt.datetime) -> str:
    """ISO 8601 with its zone: ``2026-11-30T02:00:00Z``. The database stores naive UTC, so a naive time
    is UTC; an aware one keeps its offset (``+08:00``), ``Z`` when it is UTC."""
    if value.tzinfo is None:
        return value.isoformat() + "Z"
    if value.utcoffset() == dt.timedelta(0):
        return value.replace(tzinfo=None).isoformat() + "Z"
    return value.isoformat()
