"""Recent refreshes, imports and snapshot loads, and each provider's health (``planner runs``), as records."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine


@dataclass(frozen=True)
class RunList:
    """The newest runs first (dicts, JSON-ready), and each provider's refresh health."""

    runs: list[dict[str, Any]]
    health: list[Any]  # db.queries.ProviderHealth

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "health": [h.__dict__ for h in self.health]}


def recent(
    engine: Engine,
    limit: int,
    providers: Sequence[str],
    all_providers: Sequence[str],
    timeout_s: float,
    now: dt.datetime,
) -> RunList:
    """The latest ``limit`` runs of ``providers`` (all when empty), a run a killed process left
    ``running`` shown as interrupted (:func:`planner.ingest.runs.seen_status`), with the refresh health
    of ``providers`` (or ``all_providers``). ``now`` is naive UTC, as the database stores times."""
    from db.queries import provider_health, recent_runs
    from planner.ingest.runs import seen_status

    with engine.connect() as conn:
        found = recent_runs(conn, limit, list(providers) or None)
        health = provider_health(conn, list(providers) or list(all_providers))
    runs = [
        {
            "id": r.id,
            "provider": r.provider,
            "kind": r.kind,
            "mode": r.mode,
            "status": seen_status(r.status, r.started_at, now, timeout_s),
            "started_at": r.started_at,
            "finished_at": r.finished_at,
            "seconds": (r.finished_at - r.started_at).total_seconds() if r.finished_at else None,
            "offers_seen": r.offers_seen,
            "prices_stored": r.prices_stored,
            "prices_changed": r.prices_changed,
            "offers_skipped": r.offers_skipped,
            "prices_flagged": r.prices_flagged,
            "unknown_gpus": r.unknown_gpus,
            "error": r.error,
            "notes": r.notes,
            "source": r.source,
        }
        for r in found
    ]
    return RunList(runs, list(health.values()))
