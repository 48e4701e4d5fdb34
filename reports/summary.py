"""The e-mail's words: a subject, a short plain-text summary and the same as HTML.

Cheapest option per GPU model, the biggest price moves and every provider whose last refresh did not
succeed. Provider text is escaped in the HTML; the CSV files carry the details.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reports.build import TABLES, Report

PROBLEM_STATUSES = ("failed", "partial", "running", "interrupted")


@dataclass(frozen=True)
class Summary:
    subject: str
    text: str
    html: str


def _money(value: float) -> str:
    return f"{value:,.2f}"


def _when(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{pd.Timestamp(value):%Y-%m-%d %H:%M} UTC"


def summarise(report: Report, files: Sequence[Path] = (), top: int = 15) -> Summary:
    prices = report.tables["prices"]
    cheapest = report.tables["cheapest"].head(top)
    changes = report.tables["changes"]
    moves = changes.assign(_size=changes["change_pct"].abs()).sort_values("_size", ascending=False).head(10)
    health = report.tables["health"]
    problems = health[health["status"].isin(PROBLEM_STATUSES)]
    never = health.loc[health["status"] == "never", "provider"].tolist()

    provider_count = prices["provider"].nunique()
    scope = ", ".join([*report.gpu_models, *report.providers])
    failed = int((health["status"] == "failed").sum())
    subject = f"GPU prices {report.day.isoformat()}: {len(prices)} prices, {len(changes)} change(s)"
    if failed:
        subject += f", {failed} provider(s) failed"

    heading = f"GPU prices, report of {report.day.isoformat()}" + (f" ({scope})" if scope else "")
    facts = (
        f"{len(prices)} prices from {provider_count} provider(s); newest observation "
        f"{report.as_of.isoformat() if report.as_of else 'none'} (UTC day)."
    )
    notes = []
    if len(prices) and bool(prices["from_snapshot"].all()):
        notes.append("Every price comes from the bundled snapshot: run `planner refresh` for today's prices.")
    if len(prices) == 0:
        notes.append("No prices match: run `planner refresh`, or widen the filters.")

    cheap_rows: list[tuple[str, ...]] = [
        (
            str(r.gpu_model),
            f"CNY {_money(r.cny_per_gpu_hour)}/GPU-h",
            f"{r.provider} {r.instance_type} ({r.region}), {r.billing}",
            _when(r.observed_at_utc)[:10],
        )
        for r in cheapest.itertuples()
    ]
    move_rows: list[tuple[str, ...]] = [
        (
            f"{r.change_pct:+.2f}%",
            f"since the previous {r.since}",
            f"{r.gpu_model} {r.provider} {r.instance_type} ({r.region}), {r.billing}",
            f"{_money(r.old_cny_per_gpu_hour)} -> {_money(r.new_cny_per_gpu_hour)} CNY/GPU-h",
        )
        for r in moves.itertuples()
    ]
    problem_rows: list[tuple[str, ...]] = [
        (str(r.provider), str(r.status), _when(r.started_at_utc), _first_line(r.error))
        for r in problems.itertuples()
    ]
    file_rows = [(p.name, _describe_file(report, p)) for p in files]

    more = len(report.tables["cheapest"]) - len(cheapest)
    cheap_title = "Cheapest per GPU-hour" + (
        f" ({len(cheapest)} of {len(cheapest) + more} GPU models)" if more else ""
    )
    sections: list[tuple[str, list[tuple[str, ...]], str]] = [
        (cheap_title, cheap_rows, "No prices."),
        ("Biggest price moves", move_rows, "No price changed since the previous day or week."),
        ("Providers whose last refresh did not succeed", problem_rows, "None."),
    ]
    if never:
        notes.append(f"No refresh recorded for: {', '.join(never)}.")
    text = _text(heading, facts, notes, sections, file_rows)
    body = _html(heading, facts, notes, sections, file_rows)
    return Summary(subject=subject, text=text, html=body)


def _first_line(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    line = str(value).strip().splitlines()[0] if str(value).strip() else ""
    return line if len(line) <= 200 else line[:199] + "…"


def _describe_file(report: Report, path: Path) -> str:
    for name, what in TABLES.items():
        if path.name == report.file_name(name):
            return f"{len(report.tables[name])} rows: {what}"
    return ""


def _text(heading, facts, notes, sections, file_rows) -> str:  # noqa: ANN001
    lines = [heading, "", facts, *notes]
    for title, rows, empty in sections:
        lines += ["", f"{title}:"]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
        lines += [
            "  " + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
            for row in rows
        ] or [f"  {empty}"]
    if file_rows:
        lines += ["", "Attached CSV files (UTF-8, open in Excel):"]
        lines += [f"  {name}  ({what})" for name, what in file_rows]
    return "\n".join(lines) + "\n"


def _html(heading, facts, notes, sections, file_rows) -> str:  # noqa: ANN001
    e = html.escape
    parts = [
        '<!doctype html><html><body style="font-family: sans-serif; font-size: 14px">',
        f"<h2>{e(heading)}</h2>",
        f"<p>{e(facts)}</p>",
        *(f"<p><b>{e(note)}</b></p>" for note in notes),
    ]
    for title, rows, empty in sections:
        parts.append(f"<h3>{e(title)}</h3>")
        if not rows:
            parts.append(f"<p>{e(empty)}</p>")
            continue
        parts.append('<table cellpadding="4" style="border-collapse: collapse">')
        parts += ["<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in rows]
        parts.append("</table>")
    if file_rows:
        parts.append("<h3>Attached CSV files</h3><ul>")
        parts += [f"<li><code>{e(name)}</code>: {e(what)}</li>" for name, what in file_rows]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
