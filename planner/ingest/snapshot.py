"""The bundled price snapshot: loaded automatically by reading commands when the database holds no
price at all, so a first run on a fresh machine (no account, no network) still answers.

``planner import`` into an empty database does not load it: an import says what the user wants.
"""

from __future__ import annotations

import csv
import datetime as dt
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from sqlalchemy import exc
from sqlalchemy.engine import Engine

from db import queries
from planner.config import Config
from planner.errors import DatabaseError

SNAPSHOT_FILE = "snapshot.csv"


@dataclass(frozen=True)
class SnapshotInfo:
    """Where the snapshot's prices stand: the newest and oldest observation dates and the row count."""

    newest: dt.date
    oldest: dt.date
    rows: int

    @property
    def label(self) -> str:
        return f"bundled snapshot {self.newest.isoformat()}"


def snapshot_path() -> Path:
    return Path(str(resources.files("planner").joinpath("data", SNAPSHOT_FILE)))


def snapshot_info() -> SnapshotInfo:
    with snapshot_path().open(encoding="utf-8", newline="") as fh:
        days = [dt.date.fromisoformat(row["observed_at"][:10]) for row in csv.DictReader(fh)]
    return SnapshotInfo(newest=max(days), oldest=min(days), rows=len(days))


def ensure_prices(engine: Engine, config: Config) -> SnapshotInfo | None:
    """Load the snapshot if the database has no price and auto-load is on; return its info if loaded."""
    with engine.connect() as conn:
        if queries.has_prices(conn):
            return None
    if not config.section("snapshot")["auto_load"]:
        return None
    from planner.ingest.importer import import_if_empty  # only on a first run: a quote never needs it

    info = snapshot_info()
    try:
        # The emptiness is checked again under the write lock: beside a running import (or five other
        # first commands) the snapshot is loaded once, and never into a database being filled.
        loaded = import_if_empty(
            engine, snapshot_path(), config.section("fx"), kind="snapshot", extra_columns=("gpu_note",)
        )
    except exc.IntegrityError:
        return None  # stored by another writer all the same: its copy is as good as ours
    except exc.DBAPIError as err:
        reason = str(err.orig).strip().splitlines()[0] if err.orig else type(err).__name__
        raise DatabaseError(
            f"the database holds no prices and the bundled snapshot cannot be stored in it: {reason}",
            hint="make the database writable once (or run `planner import FILE.csv` where it is), then retry",
        ) from None
    return info if loaded is not None else None
