"""``planner schedule --list`` for people: each job's cadence, the next runs and what each does, and
where it logs."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from planner.output import format_run


def render_schedule(doc: dict[str, Any]) -> str:
    """The schedule record (``planner schedule --list --format json``) in lines."""
    timezone = doc["timezone"]
    lines = [f"Jobs, in {timezone}:"]
    width = max(len(job["job"]) for job in doc["jobs"])
    zone = ZoneInfo(timezone)
    for job in doc["jobs"]:
        came = f"  ({job['setting']})" if not job["setting"].endswith(f" {job['job']}") else ""
        ran = ""
        if "last_run" in job and job["description"] not in ("off", "after each refresh"):
            when = job["last_run"] and dt.datetime.fromisoformat(job["last_run"]).astimezone(zone)
            ran = f"; last run {when:%a %Y-%m-%d %H:%M}" if when else "; never ran"
            ran += ": due now" if job["due_now"] else ""
        lines.append(f"  {job['job']:<{width}}  {job['description']}{came}{ran}")
    if doc.get("last_runs_unread"):
        lines.append(f"  (when the jobs last ran is unknown: {doc['last_runs_unread']})")
    lines.append("Next runs:")
    lines += [
        f"  {format_run(dt.datetime.fromisoformat(run['at']), timezone)}  {', then '.join(run['jobs'])}"
        for run in doc["runs"]
    ]
    if not doc["runs"]:
        lines.append("  none: every job is off or runs after each refresh")
    if not doc["email"]:
        mail = "off ([schedule] email = false)"
    elif doc["recipients"]:
        mail = f"to {', '.join(doc['recipients'])}"
    else:
        mail = "on, but [email] recipients is empty: the report is only written to disk"
    lines.append(f"The report's e-mail: {mail}.")
    stock = next(job for job in doc["jobs"] if job["job"] == "stock")
    if stock["next_runs"]:
        lines.append(f"The stock job refreshes {', '.join(doc['stock_providers'])} (prices and stock).")
    if doc["report_channels"]:
        lines.append(f"The report's summary also goes to: {', '.join(doc['report_channels'])}.")
    lines.append(f"Log file: {doc['log_file']}")
    return "\n".join(lines)
