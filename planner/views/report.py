"""``planner report`` for people: the files written, their rows and contents, and who got them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.output import table
from vocab import PROBLEM_RUN_STATUSES

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.report import ReportOutcome


def render_report(outcome: ReportOutcome) -> str:
    """Where the report went: each file (name, rows, contents), the chart's and the scope's notes, the
    providers whose last refresh failed and who it was sent to."""
    report, chart = outcome.report, outcome.chart
    newest = report.as_of.isoformat() if report.as_of else "none"
    lines = [
        f"Report of {report.day.isoformat()} (newest price observed {newest}, UTC) in {outcome.out_dir}:"
    ]
    rows = [[path.name, str(count), what] for _, path, count, what in outcome.listing()]
    lines.append(table(rows, ["file", "rows", "contents"], align_right=(1,)))
    if chart is not None and chart.note and not chart.failed:  # a failure was a warning on stderr
        lines.append(chart.note)
    lines.extend(report.scope_notes)
    health = report.tables["health"]
    failed = health.loc[health["status"].isin(PROBLEM_RUN_STATUSES), "provider"].tolist()
    if failed:
        lines.append(f"Last refresh did not succeed for: {', '.join(failed)} (see the health file).")
    delivered = [a for a in outcome.recipients if a not in outcome.refused]
    if delivered:
        lines.append(f"Sent to {', '.join(delivered)}.")
    return "\n".join(lines)
