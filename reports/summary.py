"""The e-mail's words: a subject, a short plain-text summary and the same as HTML.

Cheapest option per GPU model, the trend of the cheapest on-demand prices (the chart inline in the HTML,
its figures in the text), the biggest price moves and every provider whose last refresh did not succeed.
Provider text is escaped in the HTML; the CSV files carry the details.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reports.build import TABLES, Report
from reports.chart import SIZE_PX, Chart, alt_text
from vocab import PROBLEM_RUN_STATUSES, BillingMode, RunStatus

PROBLEM_STATUSES = PROBLEM_RUN_STATUSES


@dataclass(frozen=True)
class Summary:
    subject: str
    text: str
    html: str


def _money(value: float) -> str:
    return f"{value:,.2f}"


def _when(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{pd.Timestamp(value):%Y-%m-%d %H:%M} UTC"


@dataclass(frozen=True)
class _ChartBlock:
    title: str
    where: str  # where the picture is
    rows: list[tuple[str, ...]]
    cid: str | None  # the image's Content-ID without its angle brackets; None: no image in the HTML
    alt: str


def summarise(
    report: Report,
    files: Sequence[Path] = (),
    top: int = 15,
    chart: Chart | None = None,
    chart_cid: str | None = None,
) -> Summary:
    """``chart`` is what ``reports.chart.write_chart`` drew (its note, if any, joins the notes);
    ``chart_cid`` the Content-ID (from ``make_msgid``) under which the message carries its PNG."""
    prices = report.tables["prices"]
    # The cheapest models, cheapest first: the CSV lists every model by name, the e-mail the top ones.
    cheapest = (
        report.tables["cheapest"].sort_values(["cny_per_gpu_hour", "gpu_model"], kind="stable").head(top)
    )
    changes = report.tables["changes"]
    moves = changes.assign(_size=changes["change_pct"].abs()).sort_values("_size", ascending=False).head(10)
    health = report.tables["health"]
    problems = health[health["status"].isin(PROBLEM_STATUSES)]
    never = health.loc[health["status"] == "never", "provider"].tolist()

    provider_count = prices["provider"].nunique()
    scope = ", ".join([*report.gpu_models, *report.providers])
    failed = int((health["status"] == RunStatus.FAILED).sum())
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
    notes.extend(report.scope_notes)  # the cheapest table's region scope, and anything cheaper outside it

    cheap_rows: list[tuple[str, ...]] = [
        (
            str(r.gpu_model),
            f"CNY {_money(r.cny_per_gpu_hour)}/GPU-h ({r.cny_per_gpu_hour_basis})",
            _on_demand(r.billing, r.on_demand_cny_per_gpu_hour),
            f"{r.provider} {r.instance_type} ({r.region})",
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
    cheap_title = (
        "Cheapest per GPU-hour: list price, any billing mode (a period's price over all its hours)"
        + (
            f" (the {len(cheapest)} cheapest of {len(cheapest) + more} GPU models; all in the cheapest CSV)"
            if more
            else ""
        )
    )
    sections: list[tuple[str, list[tuple[str, ...]], str]] = [
        (cheap_title, cheap_rows, "No prices."),
        ("Biggest price moves", move_rows, "No price changed since the previous day or week."),
        ("Providers whose last refresh did not succeed", problem_rows, "None."),
    ]
    if never:
        notes.append(f"No refresh recorded for: {', '.join(never)}.")
    if chart and chart.note:
        notes.append(chart.note)
    block = _chart_block(chart, chart_cid)
    text = _text(heading, facts, notes, block, sections, file_rows)
    body = _html(heading, facts, notes, block, sections, file_rows)
    return Summary(subject=subject, text=text, html=body)


def _chart_block(chart: Chart | None, cid: str | None) -> _ChartBlock | None:
    """The chart's figures for the text part (first and last day per GPU model) and its image."""
    if chart is None or chart.path is None or chart.trend is None:
        return None
    trend = chart.trend
    where = (
        f"the chart is in the HTML version and in {chart.path.name}" if cid else f"chart: {chart.path.name}"
    )
    title = (
        f"Cheapest on-demand CNY per GPU-hour (on_demand, per hour), {trend.first_day} to {trend.last_day};"
        " the last figure is the cheapest that can be rented now"
    )
    rows: list[tuple[str, ...]] = []
    for line in trend.lines:
        first, last = line.cny_per_gpu_hour[0], line.cny_per_gpu_hour[-1]
        span = _money(last) if len(line.days) < 2 else f"{_money(first)} -> {_money(last)}"
        change = "" if line.change is None else f"{line.change:+.1%}"
        rows.append((line.gpu_model, f"{span} CNY/GPU-h", change))
    if trend.left_out:
        rows.append((f"{trend.left_out} more GPU model(s)", "in the cheapest CSV", ""))
    return _ChartBlock(title, where, rows, cid, alt_text(trend))


def _on_demand(billing: str, on_demand: float) -> str:
    """The model's on-demand headline beside a cheapest option on another billing mode: the figure the
    chart ends on and ``gpus --value`` ranks by."""
    if billing == BillingMode.ON_DEMAND or pd.isna(on_demand):
        return "" if billing == BillingMode.ON_DEMAND else "no on-demand price"
    return f"on_demand CNY {_money(on_demand)}/GPU-h"


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


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
    return [
        "  " + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
        for row in rows
    ]


def _text(heading, facts, notes, block, sections, file_rows) -> str:  # noqa: ANN001
    lines = [heading, "", facts, *notes]
    if block:
        lines += ["", f"{block.title} ({block.where}):", *_aligned(block.rows)]
    for title, rows, empty in sections:
        lines += ["", f"{title}:"]
        lines += _aligned(rows) or [f"  {empty}"]
    if file_rows:
        lines += ["", "Attached CSV files (UTF-8, open in Excel):"]
        lines += [f"  {name}  ({what})" for name, what in file_rows]
    return "\n".join(lines) + "\n"


def _html(heading, facts, notes, block, sections, file_rows) -> str:  # noqa: ANN001
    e = html.escape
    parts = [
        '<!doctype html><html><body style="font-family: sans-serif; font-size: 14px">',
        f"<h2>{e(heading)}</h2>",
        f"<p>{e(facts)}</p>",
        *(f"<p><b>{e(note)}</b></p>" for note in notes),
    ]
    if block:
        parts.append(f"<h3>{e(block.title)}</h3>")
        if block.cid:
            width, height = SIZE_PX
            parts.append(
                f'<p><img src="cid:{e(block.cid)}" alt="{e(block.alt)}" width="{width}" height="{height}" '
                'style="max-width: 100%; height: auto"></p>'
            )
        else:
            parts += _html_table(block.rows)
    for title, rows, empty in sections:
        parts.append(f"<h3>{e(title)}</h3>")
        if not rows:
            parts.append(f"<p>{e(empty)}</p>")
            continue
        parts += _html_table(rows)
    if file_rows:
        parts.append("<h3>Attached CSV files</h3><ul>")
        parts += [f"<li><code>{e(name)}</code>: {e(what)}</li>" for name, what in file_rows]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_table(rows: list[tuple[str, ...]]) -> list[str]:
    cells = ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    return ['<table cellpadding="4" style="border-collapse: collapse">', *cells, "</table>"]
