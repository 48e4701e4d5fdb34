"""A report: five tables built from the database, written as dated CSV files, and the data of its chart
(``reports.chart``), read in the same transaction.

File names are ours: the date and a fixed table name, plus the canonical GPU and provider names of a
filtered report (checked against a safe alphabet). Nothing a provider sends reaches a file name.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Connection, Engine

from db.report_queries import as_of
from reports import data
from reports.chart import TREND_DAYS
from reports.csvfile import write_csv
from vocab.words import ENGLISH, word

# The tables in the order they are written and attached, with what each holds.
TABLES: dict[str, str] = {
    "prices": "the latest price of every GPU instance and billing mode, with CNY per GPU-hour",
    "cheapest": "the cheapest option per GPU model",
    "changes": "price changes since the previous day and the previous week",
    "availability": "stock per instance, where the provider reports it",
    "health": "the last refresh of each provider",
}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Report:
    day: dt.date  # the date in the file names (the team's calendar day)
    as_of: dt.date | None  # the newest observation (UTC day); None when the database holds no price
    generated_at: dt.datetime  # UTC
    tables: dict[str, pd.DataFrame] = field(hash=False, compare=False)
    gpu_models: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    # The chart's data (``data.trend_frame``); None when the report was built without a chart.
    trend: pd.DataFrame | None = field(default=None, hash=False, compare=False)
    scope: str = data.ALL_REGIONS  # the region scope of the cheapest table and the chart
    scope_notes: tuple[str, ...] = ()  # what the scope covers, and any cheaper option outside it

    def file_name(self, table: str, suffix: str = "csv") -> str:
        scope = "_".join(part for part in (_scope(self.gpu_models), _scope(self.providers)) if part)
        scope = f"_{scope}" if scope else ""
        if len(scope) > 60:
            scope = "_filtered-" + hashlib.sha256(scope.encode()).hexdigest()[:8]
        return f"{self.day.isoformat()}{scope}_{table}.{suffix}"


def _scope(names: Sequence[str]) -> str:
    return "+".join(_SAFE.sub("-", n).strip(".-") or "x" for n in names)


def build_report(
    engine: Engine,
    day: dt.date,
    *,
    gpu_models: Sequence[str] = (),
    providers: Sequence[str] = (),
    known_providers: Sequence[str] = (),
    now: dt.datetime | None = None,
    chart: bool = True,
    cheapest: Callable[[Connection], data.CheapestChoice] | None = None,
) -> Report:
    """Read every table of the report, and with ``chart`` the chart's data, in one read transaction, so
    a refresh committing meanwhile cannot make the files disagree (REPEATABLE READ on PostgreSQL, an
    explicit BEGIN on SQLite, whose driver otherwise runs each SELECT in its own snapshot).

    ``cheapest(conn)`` names each GPU model's cheapest offer as (provider, region, instance type,
    billing) and the region scope of the cheapest table and the chart: the planner passes its pricing
    core's choice (``planner.answers.report.cheapest_for``: only what can be rented now, no vGPU slice, within
    the scope), as this package never imports the planner."""
    models = list(gpu_models) or None
    names = list(providers) or None
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
        elif conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN")
        latest = data.latest_frame(conn, models, names)
        newest = as_of(conn, models, names)
        choice = cheapest(conn) if cheapest else None
        tables = {
            "prices": latest,
            "cheapest": data.cheapest_frame(latest, choice),
            "changes": data.changes_frame(conn, newest, models, names),
            "availability": data.availability_frame(conn, latest, models, names),
            "health": data.health_frame(conn, list(providers) or list(known_providers)),
        }
        trend = data.trend_frame(conn, newest, TREND_DAYS, models, names, choice) if chart else None
    if names:
        tables["health"] = tables["health"][tables["health"]["provider"].isin(names)].reset_index(drop=True)
    return Report(
        day=day,
        as_of=newest,
        generated_at=now or dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0),
        tables=tables,
        gpu_models=tuple(gpu_models),
        providers=tuple(providers),
        trend=trend,
        scope=choice.scope if choice else data.ALL_REGIONS,
        scope_notes=choice.notes if choice else (),
    )


def write_report(report: Report, out_dir: Path, lang: str = ENGLISH) -> list[Path]:
    """Write every table to ``out_dir`` (created if needed); the paths in TABLES order. ``lang`` "zh"
    heads the columns in Chinese (``column.*`` in ``vocab.words``); the cells stay as machines read them."""
    out_dir = Path(out_dir).expanduser()
    out_dir.mkdir(parents=True, exist_ok=True)
    return [write_csv(headed(report.tables[name], lang), out_dir / report.file_name(name)) for name in TABLES]


def headed(frame: pd.DataFrame, lang: str) -> pd.DataFrame:
    """``frame`` with its column names in ``lang`` (unchanged in English)."""
    if lang == ENGLISH:
        return frame
    return frame.rename(columns={c: word("column", c, lang) for c in frame.columns})
