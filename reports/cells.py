"""Formula injection: the rule every CSV the planner writes follows (its times and money: ``vocab``).

Here, in ``reports`` and free of pandas, because the reports' files (``reports.csvfile``) and the
planner's ``--format csv`` and ``export`` (``planner.output``) both need it, and ``reports`` never
imports ``planner``.
"""

from __future__ import annotations

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
