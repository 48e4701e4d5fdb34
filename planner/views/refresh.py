"""``planner refresh`` for people: one row per provider's outcome, the details below, and what the exit
code means."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.output import short, table
from vocab import RunStatus

if TYPE_CHECKING:  # pragma: no cover
    from planner.ingest.refresh import RefreshSummary


def render_summary(summary: RefreshSummary) -> str:
    rows = [
        [
            o.provider,
            o.status,
            o.mode or "-",
            str(o.offers),
            str(o.stored),
            str(o.changed),
            f"{o.seconds:.1f}",
            short(o.error, 50) if o.error else "-",
        ]
        for o in summary.outcomes
    ]
    headers = ["provider", "status", "mode", "offers", "new", "changed", "seconds", "error"]
    lines = [table(rows, headers, align_right=(3, 4, 5, 6))]
    for o in summary.outcomes:
        details = [f"error: {o.error}"] if o.error and len(o.error) > 50 else []
        details += o.notes
        if o.already_present:
            details.append(
                f"{o.already_present} price(s) unchanged: confirmed, not stored again (a price is stored when it changes)"
            )
        if details:
            lines.append("")
            lines.append(f"{o.provider}:")
            lines.extend(f"  - {d}" for d in details)
    failed = [o.provider for o in summary.outcomes if o.status == RunStatus.FAILED]
    lines.append("")
    if failed:
        lines.append(
            f"Exit code 1: {', '.join(failed)} failed; nothing of theirs was stored and their last good "
            "prices stay in use. `planner runs` shows the history."
        )
    else:
        lines.append("Every provider refreshed or was skipped.")
    if any((o.mode or "") == "public" for o in summary.outcomes):  # a live run, not a replay
        lines.append(
            "Some providers ran without an account: `planner providers` says what to set to see more."
        )
    return "\n".join(lines)
