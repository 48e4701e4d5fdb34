"""``planner schedule --list`` for people: when the nightly job runs next, what each run does, and
where it logs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from planner.output import format_run


def render_schedule(doc: dict[str, Any]) -> str:
    """The schedule record (``planner schedule --list --format json``) in lines."""
    timezone = doc["timezone"]
    lines = [f"Schedule: {doc['cron']!r} (minute hour day month weekday) in {timezone}"]
    lines.append("Next runs:")
    lines += [f"  {format_run(dt.datetime.fromisoformat(run), timezone)}" for run in doc["next_runs"]]
    if not doc["email"]:
        mail = "off ([schedule] email = false)"
    elif doc["recipients"]:
        mail = f"to {', '.join(doc['recipients'])}"
    else:
        mail = "on, but [email] recipients is empty: the report is only written to disk"
    lines.append(f"Each run: refresh, then alerts, then report; e-mail {mail}.")
    if doc["stock_every"]:
        providers = ", ".join(doc["stock_providers"])
        lines.append(
            f"Between runs: a stock and price refresh of {providers} every {doc['stock_every']}, then alerts."
        )
    if doc["report_channels"]:
        lines.append(f"The report's summary also goes to: {', '.join(doc['report_channels'])}.")
    lines.append(f"Log file: {doc['log_file']}")
    return "\n".join(lines)
