"""``planner runs`` for people: the newest runs, then each provider's refresh health."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.output import short, table
from vocab import STORED_RUN_STATUSES, RunStatus

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.runs import RunList


def render_runs(found: RunList) -> str:
    if not found.runs:
        return "No runs yet. `planner refresh` pulls today's prices."
    rows = [
        [
            str(r["id"]),
            f"{r['started_at']:%Y-%m-%d %H:%M}",
            r["provider"],
            r["kind"],
            r["status"],
            str(r["offers_seen"]),
            str(r["prices_stored"]),
            str(r["prices_changed"]),
            str(r["offers_skipped"] or 0),
            str(r["prices_flagged"] or 0),
            "-" if r["seconds"] is None else f"{r['seconds']:.0f}",
            short(r["error"], 60),
        ]
        for r in found.runs
    ]
    headers = ["id", "started (UTC)", "provider", "kind", "status", "offers", "new", "changed"]
    headers += ["skipped", "flagged", "secs", "error"]
    lines = [table(rows, headers, align_right=(0, 5, 6, 7, 8, 9, 10))]
    for record in found.runs:
        if record["unknown_gpus"]:
            lines.append(f"run {record['id']} ({record['provider']}): unknown GPUs {record['unknown_gpus']}")
    if found.health:
        lines += ["", "Health (refresh runs):"]
        lines += ["  " + _health_line(h) for h in found.health]
    return "\n".join(lines)


def _health_line(h: Any) -> str:  # db.queries.ProviderHealth, which a view does not import
    last = f"last refresh {h.last_status} {h.last_started_at:%Y-%m-%d %H:%M} UTC"
    if h.last_status in (*STORED_RUN_STATUSES, RunStatus.SKIPPED, RunStatus.RUNNING):  # no error to show
        return f"{h.provider}: {last}"
    error = f" ({h.last_error})" if h.last_error else ""
    if h.last_ok_at is None:
        return (
            f"{h.provider}: {last}{error}; never refreshed successfully ({h.failures_since_ok} failed run(s))"
        )
    return (
        f"{h.provider}: {last}{error}; last good {h.last_ok_at:%Y-%m-%d %H:%M} UTC "
        f"({h.failures_since_ok} failed run(s) since; its prices are from then)"
    )
