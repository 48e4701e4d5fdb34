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
from vocab import PROBLEM_RUN_STATUSES, BillingMode, RunStatus, gpu_hour_basis
from vocab.words import CHINESE, ENGLISH, named, say

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
    lang: str = ENGLISH,
    page: Path | None = None,
) -> Summary:
    """``chart`` is what ``reports.chart.write_chart`` drew (its note, if any, joins the notes);
    ``chart_cid`` the Content-ID (from ``make_msgid``) under which the message carries its PNG; ``lang``
    the language people read (``vocab.words``); ``page`` the report's web page attached beside the CSV
    files (``reports.page``), named first: it is where a person looks."""
    prices = report.tables["prices"]
    # The first models of the cheapest table, in its order (the GPUs teams rent first, then the rest;
    # reports.data.cheapest_frame): the CSV lists every model, the e-mail the top ones.
    cheapest = report.tables["cheapest"].head(top)
    changes = report.tables["changes"]
    moves = changes.assign(_size=changes["change_pct"].abs()).sort_values("_size", ascending=False).head(10)
    health = report.tables["health"]
    problems = health[health["status"].isin(PROBLEM_STATUSES)]
    never = health.loc[health["status"] == "never", "provider"].tolist()

    provider_count = prices["provider"].nunique()
    scope = say("words.list_separator", lang).join(
        [*report.gpu_models, *(named("provider", p, lang) for p in report.providers)]
    )
    failed = int((health["status"] == RunStatus.FAILED).sum())
    day = report.day.isoformat()
    subject = say("mail.subject", lang, day=day, prices=len(prices), changes=len(changes))
    if failed:
        subject += say("mail.subject_failed", lang, failed=failed)

    heading = say("mail.heading", lang, day=day) + (
        say("mail.heading_scope", lang, scope=scope) if scope else ""
    )
    newest = report.as_of.isoformat() if report.as_of else say("mail.none", lang)
    facts = say("mail.facts", lang, prices=len(prices), providers=provider_count, newest=newest)
    notes = [say("mail.page", lang, file=page.name)] if page is not None else []
    if len(prices) and bool(prices["from_snapshot"].all()):
        notes.append(say("mail.all_snapshot", lang))
    if len(prices) == 0:
        notes.append(say("mail.no_prices_match", lang))
    notes.extend(report.scope_notes)  # the cheapest table's region scope, and anything cheaper outside it

    cheap_rows: list[tuple[str, ...]] = [
        (
            str(r.gpu_model),
            say(
                "mail.list_price",
                lang,
                amount=_money(r.cny_per_gpu_hour),
                basis=r.cny_per_gpu_hour_basis if lang == ENGLISH else gpu_hour_basis(r.billing, lang=lang),
            ),
            _on_demand(r.billing, r.on_demand_cny_per_gpu_hour, lang),
            say(
                "mail.where",
                lang,
                provider=named("provider", r.provider, lang),
                instance=r.instance_type,
                region=r.region,
            ),
            _when(r.observed_at_utc)[:10],
        )
        for r in cheapest.itertuples()
    ]
    move_rows: list[tuple[str, ...]] = [
        (
            f"{r.change_pct:+.2f}%",
            say(f"mail.since_{r.since}", lang) if r.since in ("day", "week") else str(r.since),
            say(
                "mail.move_offer",
                lang,
                gpu=r.gpu_model,
                provider=named("provider", r.provider, lang),
                instance=r.instance_type,
                region=r.region,
                billing=named("billing", r.billing, lang),
            ),
            say(
                "mail.move_prices",
                lang,
                old=_money(r.old_cny_per_gpu_hour),
                new=_money(r.new_cny_per_gpu_hour),
            ),
        )
        for r in moves.itertuples()
    ]
    problem_rows: list[tuple[str, ...]] = [
        (
            named("provider", r.provider, lang),
            named("status", r.status, lang),
            _when(r.started_at_utc),
            _first_line(r.error),
        )
        for r in problems.itertuples()
    ]
    file_rows = [(p.name, _describe_file(report, p, lang)) for p in files]
    if page is not None:
        file_rows.insert(0, (page.name, say("mail.page_file", lang)))

    total = len(report.tables["cheapest"])
    cheap_title = say("mail.cheapest_title", lang) + (
        say("mail.cheapest_first", lang, shown=len(cheapest), total=total) if total > len(cheapest) else ""
    )
    sections: list[tuple[str, list[tuple[str, ...]], str]] = [
        (cheap_title, cheap_rows, say("mail.no_prices", lang)),
        (say("mail.moves_title", lang), move_rows, say("mail.no_moves", lang)),
        (say("mail.problems_title", lang), problem_rows, say("mail.no_problems", lang)),
    ]
    if never:
        listed = say("words.list_separator", lang).join(named("provider", p, lang) for p in never)
        notes.append(say("mail.never_refreshed", lang, providers=listed))
    if chart and chart.note:
        notes.append(chart.note)
    block = _chart_block(chart, chart_cid, lang)
    text = _text(heading, facts, notes, block, sections, file_rows, lang)
    body = _html(heading, facts, notes, block, sections, file_rows, lang)
    return Summary(subject=subject, text=text, html=body)


def _chart_block(chart: Chart | None, cid: str | None, lang: str = ENGLISH) -> _ChartBlock | None:
    """The chart's figures for the text part (first and last day per GPU model) and its image."""
    if chart is None or chart.path is None or chart.trend is None:
        return None
    trend = chart.trend
    where = (
        say("mail.chart_inline", lang, file=chart.path.name)
        if cid
        else say("mail.chart_file", lang, file=chart.path.name)
    )
    title = say("mail.chart_title", lang, first=trend.first_day, last=trend.last_day)
    rows: list[tuple[str, ...]] = []
    for line in trend.lines:
        first, last = line.cny_per_gpu_hour[0], line.cny_per_gpu_hour[-1]
        span = _money(last) if len(line.days) < 2 else f"{_money(first)} -> {_money(last)}"
        change = "" if line.change is None else f"{line.change:+.1%}"
        rows.append((line.gpu_model, say("mail.chart_span", lang, span=span), change))
    if trend.left_out:
        rows.append(
            (say("mail.chart_more", lang, count=trend.left_out), say("mail.chart_more_where", lang), "")
        )
    return _ChartBlock(title, where, rows, cid, alt_text(trend, lang))


def _on_demand(billing: str, on_demand: float, lang: str = ENGLISH) -> str:
    """The model's on-demand headline beside a cheapest option on another billing mode: the figure the
    chart ends on and ``gpus --value`` ranks by."""
    if billing == BillingMode.ON_DEMAND or pd.isna(on_demand):
        return "" if billing == BillingMode.ON_DEMAND else say("mail.no_on_demand", lang)
    return say("mail.on_demand_beside", lang, amount=_money(on_demand))


def _first_line(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    line = str(value).strip().splitlines()[0] if str(value).strip() else ""
    return line if len(line) <= 200 else line[:199] + "…"


def _describe_file(report: Report, path: Path, lang: str = ENGLISH) -> str:
    for name, what in TABLES.items():
        if path.name == report.file_name(name):
            words = what if lang == ENGLISH else say(f"table.{name}", lang)
            return say("mail.file_rows", lang, rows=len(report.tables[name]), what=words)
    return ""


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
    return [
        "  " + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
        for row in rows
    ]


def _text(heading, facts, notes, block, sections, file_rows, lang=ENGLISH) -> str:  # noqa: ANN001
    lines = [heading, "", facts, *notes]
    if block:
        lines += [
            "",
            say("mail.block_heading", lang, title=block.title, where=block.where),
            *_aligned(block.rows),
        ]
    for title, rows, empty in sections:
        lines += ["", say("mail.section_heading", lang, title=title)]
        lines += _aligned(rows) or [f"  {empty}"]
    if file_rows:
        lines += ["", say("mail.files_text", lang)]  # the page first, then the CSV files
        lines += ["  " + say("mail.file_line", lang, name=name, what=what) for name, what in file_rows]
    return "\n".join(lines) + "\n"


def _html(heading, facts, notes, block, sections, file_rows, lang=ENGLISH) -> str:  # noqa: ANN001
    e = html.escape
    parts = [
        f'<!doctype html><html lang="{"zh-CN" if lang == CHINESE else "en"}">'
        '<body style="font-family: sans-serif; font-size: 14px">',
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
        parts.append(f"<h3>{e(say('mail.files_html', lang))}</h3><ul>")
        parts += [
            f"<li><code>{e(name)}</code>{e(say('mail.file_item', lang))}{e(what)}</li>"
            for name, what in file_rows
        ]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_table(rows: list[tuple[str, ...]]) -> list[str]:
    cells = ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    return ['<table cellpadding="4" style="border-collapse: collapse">', *cells, "</table>"]
