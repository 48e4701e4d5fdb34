"""The report as one self-contained web page: the cheapest rentable option per GPU, each GPU's price
trend as a small SVG chart, stock, what changed since the last report and the health of each provider's
refresh, in the team's language (``vocab.words``).

Nothing is fetched when the page is viewed: the CSS is inline, the charts are SVG drawn here (no
script, no font, no image file), and a Content-Security-Policy forbids anything else, so the page
reads the same from a mail attachment, a shared folder or a browser with no network. Every text that
comes from outside (a region, an instance type, a provider's error message) is escaped; the numbers and
dates are ours.

Written beside the CSV files as ``<day>[_scope]_report.html`` (``Report.file_name``), whole or not at
all (``reports.files.written_whole``).
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reports.chart import TREND_DAYS
from reports.files import written_whole
from vocab import PROBLEM_RUN_STATUSES, StockStatus, gpu_hour_basis
from vocab.words import CHINESE, say, word

if TYPE_CHECKING:  # the page reads a built report's DataFrames; pandas is loaded by whoever built it
    import pandas as pd

    from reports.build import Report

NAME = "report"  # the file's name after the date: <day>[_scope]_report.html
# What the page holds, as ``planner report`` lists it beside the tables' files.
CONTENTS = (
    "the report as one web page: cheapest option per GPU, price trends, stock, changes and the "
    "health of each provider's refresh"
)
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
NB_HYPHEN = "\u2011"
MAX_CHANGES = 100  # rows of the changes table shown; the CSV file has them all

# A small chart, in SVG user units (the viewBox): the plot sits inside the margins.
CHART_W, CHART_H = 340, 190
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 46, 22, 14, 40
PALETTE = ("#1f77b4", "#d62728")  # the line, and the latest point

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "PingFang SC",
  "Microsoft YaHei", "WenQuanYi Zen Hei", sans-serif; margin: 0; color: #1d2733; background: #f6f7f9;
  font-size: 14px; line-height: 1.45; }
header, main { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 20px; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 0 0 4px; }
section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 14px 16px;
  margin: 14px 0; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 4px 0; padding: 0; list-style: none; }
.facts b { font-weight: 600; }
.notes { margin: 6px 0 0; padding-left: 18px; color: #4a5561; }
.lead { color: #4a5561; margin: 0 0 10px; }
.stale { color: #a33a00; font-weight: 600; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 5px 8px; border-bottom: 1px solid #e6e9ed; text-align: left; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; }
th.num { text-align: right; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.basis { display: inline-block; min-width: 9.5em; }
:lang(zh) .basis { white-space: nowrap; }  /* a Chinese basis is short: on one line */
tbody tr:hover { background: #f8fafc; }
.gpu, .nowrap { white-space: nowrap; }
.gpu { font-weight: 600; }
.muted { color: #6b7682; }
.up { color: #b42318; }
.down { color: #067647; }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; white-space: nowrap; }
.s-available, .s-ok { background: #dcfae6; color: #085d3a; }
.s-low, .s-partial, .s-running, .s-skipped { background: #fef0c7; color: #93370d; }
.s-sold_out, .s-failed, .s-interrupted, .s-never { background: #fee4e2; color: #912018; }
.s-unknown, .s-not_listed { background: #eaecf0; color: #475467; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
figure { margin: 0; border: 1px solid #e6e9ed; border-radius: 5px; padding: 8px; }
figcaption { font-size: 13px; margin-bottom: 2px; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-size: 10px; fill: #4a5561; }
svg.chart .grid { stroke: #e6e9ed; stroke-width: 1; }
svg.chart .axis { stroke: #8a94a0; stroke-width: 1; }
svg.chart .line { fill: none; stroke: #1f77b4; stroke-width: 2; }
details { margin-top: 10px; }
summary { cursor: pointer; color: #1f5fa8; }
.error { max-width: 420px; overflow-wrap: anywhere; color: #912018; }
footer { max-width: 1180px; margin: 0 auto; padding: 4px 20px 24px; color: #6b7682; font-size: 12px; }
"""


def esc(value: object) -> str:
    """Text from outside, safe in an element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def _missing(value: object) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT and pandas' NA are the values unequal to themselves
    except (TypeError, ValueError):  # pandas' NA refuses a truth value
        return True


def money(value: object, per_hour: bool = True) -> str:
    """An amount to 2 decimals; a per-hour price under 1 to 4 (0.3125, not 0.31). "–" when missing."""
    if _missing(value):
        return "–"
    amount = float(value)  # type: ignore[arg-type]
    places = 4 if per_hour and abs(amount) < 1 else 2
    return f"{amount:,.{places}f}"


def when(value: object) -> str:
    """A UTC moment as people read it: 2026-11-20 02:00 UTC."""
    if _missing(value):
        return "–"
    moment = value.to_pydatetime() if hasattr(value, "to_pydatetime") else value
    if isinstance(moment, dt.datetime):
        return f'<span class="nowrap">{moment:%Y-%m-%d %H:%M} UTC</span>'
    return esc(moment)


def _day(value: object) -> str:
    """A day as the tables show it (2026-11-18), "–" when missing."""
    if _missing(value):
        return "–"
    if isinstance(value, dt.datetime):  # pandas' Timestamp too
        value = value.date()
    shown = esc(value.isoformat() if isinstance(value, dt.date) else str(value)[:10])
    return f'<span class="nowrap">{shown}</span>'


def count(value: object) -> str:
    return "–" if _missing(value) else f"{int(value):,}"  # type: ignore[call-overload]


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [dict(row) for row in frame.to_dict("records")]


def _table(headings: Sequence[tuple[str, bool]], rows: Iterable[Sequence[str]], name: str) -> str:
    """A table: ``headings`` are (words, numeric); each row's cells are HTML already escaped."""
    # A non-breaking hyphen: "CNY/GPU-h" never wraps after "GPU-".
    head = "".join(
        f'<th scope="col"{" class=num" if num else ""}>{esc(h).replace("-", NB_HYPHEN)}</th>'
        for h, num in headings
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=num' if num else ''}>{cell}</td>"
            for cell, (_, num) in zip(row, headings, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    return (
        f'<div class="table-wrap"><table data-table="{name}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _badge(prefix: str, value: object, lang: str) -> str:
    text = str(value)
    css = "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "-" for c in text)
    return f'<span class="badge s-{css}">{esc(word(prefix, text, lang))}</span>'


def _provider(value: object, lang: str) -> str:
    return esc(word("provider", str(value), lang))


def _billing(value: object, lang: str) -> str:
    return f'<span class="nowrap">{esc(word("billing", str(value), lang))}</span>'


def _offer(row: dict[str, Any], lang: str) -> str:
    """Where an offer is, in one cell: the provider and region, the instance type below."""
    return (
        f'<span class="where">{_provider(row["provider"], lang)} · {esc(row["region"])}</span><br>'
        f'<span class="muted">{esc(row["instance_type"])}</span>'
    )


# --- the header --------------------------------------------------------------------------------------


def _age(report: Report, lang: str) -> str:
    """How old the newest price is on the report's day (a day's difference is a time zone's)."""
    if report.as_of is None:
        return f'<span class="stale">{esc(say("page.no_prices", lang))}</span>'
    days = (report.day - report.as_of).days
    if days <= 1:
        return esc(say("page.age_fresh", lang))
    return f'<span class="stale">{esc(say("page.age_days", lang, days=days))}</span>'


def _header(report: Report, lang: str) -> str:
    newest = report.as_of.isoformat() if report.as_of else "–"
    facts = [
        (say("page.report_day", lang), esc(report.day.isoformat())),
        (say("page.newest_price", lang), esc(newest)),
        (say("page.data_age", lang), _age(report, lang)),
        (say("page.generated", lang), when(report.generated_at)),
    ]
    items = "".join(f"<li><b>{esc(label)}:</b> {value}</li>" for label, value in facts)
    notes = "".join(f"<li>{esc(note)}</li>" for note in report.scope_notes)
    filters = [*report.gpu_models, *(word("provider", p, lang) for p in report.providers)]
    if filters:
        shown = say("words.list_separator", lang).join(filters)
        notes = f"<li>{esc(say('page.filtered', lang, names=shown))}</li>" + notes
    return (
        f"<header><h1>{esc(say('page.title', lang, day=report.day.isoformat()))}</h1>"
        f'<ul class="facts">{items}</ul>' + (f'<ul class="notes">{notes}</ul>' if notes else "") + "</header>"
    )


# --- the cheapest option per GPU ---------------------------------------------------------------------


def _cheapest(report: Report, lang: str) -> str:
    frame = report.tables["cheapest"]
    headings = [
        (say("page.col.gpu", lang), False),
        (say("words.cny_per_gpu_hour", lang), True),
        (say("page.col.billing", lang), False),
        (say("page.col.offer", lang), False),
        (say("page.col.gpus_per_instance", lang), True),
        (say("page.col.list_price", lang), True),
        (say("page.col.on_demand", lang), True),
        (say("page.col.cheapest_spot", lang), True),
        (say("page.col.offers", lang), True),
        (say("page.col.observed", lang), False),
    ]
    rows = []
    for r in _rows(frame):
        billing = str(r["billing"])
        unit = str(r.get("unit") or "hour")
        price = money(r.get("price"), per_hour=unit == "hour")
        unit_words = say(f"unit.{unit}", lang) if f"unit.{unit}" in _UNITS else unit
        currency = str(r.get("currency") or "")
        if currency == "CNY":  # 元 in Chinese
            listed = esc(say("page.price_cny_per_unit", lang, amount=price, unit=unit_words))
        else:
            listed = esc(say("page.price_per_unit", lang, amount=price, currency=currency, unit=unit_words))
        observed = _day(r.get("observed_at_utc"))
        snapshot = r.get("from_snapshot")
        if not _missing(snapshot) and bool(snapshot):
            observed += f' <span class="muted">({esc(say("page.from_snapshot", lang))})</span>'
        offers = f"{count(r.get('offers'))} ({count(r.get('providers'))})"
        rows.append(
            [
                f'<span class="gpu">{esc(r["gpu_model"])}</span>',
                f"<b>{money(r['cny_per_gpu_hour'])}</b>",
                f'<span class="basis">{esc(gpu_hour_basis(billing, lang=lang))}</span>',
                _offer(r, lang),
                count(r.get("gpus_per_instance")),
                listed,
                money(r.get("on_demand_cny_per_gpu_hour")),
                money(r.get("cheapest_spot_cny_per_gpu_hour")),
                offers,
                observed,
            ]
        )
    body = _table(headings, rows, "cheapest") if rows else _empty("page.cheapest.none", lang)
    return _section("cheapest", say("page.cheapest.title", lang), say("page.cheapest.lead", lang), body)


_UNITS = frozenset({"unit.hour", "unit.day", "unit.week", "unit.month", "unit.year"})


# --- the price trends ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One GPU model's cheapest on-demand CNY per GPU-hour, a point a day."""

    gpu_model: str
    days: tuple[dt.date, ...]
    cny_per_gpu_hour: tuple[float, ...]


def trend_series(report: Report) -> list[Series]:
    """Each GPU model of the trend, in the cheapest table's order (models only in the trend after)."""
    frame = report.trend
    if frame is None or frame.empty:
        return []
    found = {
        str(model): Series(
            str(model),
            tuple(d.date() if hasattr(d, "date") else d for d in rows["day"]),
            tuple(float(v) for v in rows["cny_per_gpu_hour"]),
        )
        for model, rows in frame.groupby("gpu_model", sort=True)
    }
    order = [str(m) for m in report.tables["cheapest"]["gpu_model"] if str(m) in found]
    order += sorted(set(found) - set(order))
    return [found[m] for m in order]


def nice_ticks(top: float, count_wanted: int = 4) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 times a power of ten) up to at least ``top``."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count_wanted
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    steps = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(steps + 1)]


def _date_label(day: dt.date, lang: str) -> str:
    return say("page.chart.date", lang, month=day.month, day=day.day)


def chart_svg(series: Series, first: dt.date, last: dt.date, lang: str) -> str:
    """One GPU's trend as an inline SVG: price axis from 0 (CNY/GPU-h), date axis over the window."""
    plot_w = CHART_W - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = CHART_H - MARGIN_TOP - MARGIN_BOTTOM
    span_days = max(1, (last - first).days)
    ticks = nice_ticks(max(series.cny_per_gpu_hour) * 1.05)
    top = ticks[-1]

    def x(day: dt.date) -> float:
        return MARGIN_LEFT + plot_w * (day - first).days / span_days

    def y(value: float) -> float:
        return MARGIN_TOP + plot_h * (1 - value / top)

    parts = []
    for tick in ticks:
        parts.append(
            f'<line class="grid" x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_w}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}"/><text x="{MARGIN_LEFT - 5}" y="{y(tick) + 3.5:.1f}" '
            f'text-anchor="end">{tick:,g}</text>'
        )
    days = [first + dt.timedelta(days=round(span_days * i / 3)) for i in range(4)]
    for day in dict.fromkeys(days):
        parts.append(
            f'<line class="axis" x1="{x(day):.1f}" x2="{x(day):.1f}" y1="{MARGIN_TOP + plot_h}" '
            f'y2="{MARGIN_TOP + plot_h + 4}"/><text x="{x(day):.1f}" y="{MARGIN_TOP + plot_h + 15}" '
            f'text-anchor="middle">{esc(_date_label(day, lang))}</text>'
        )
    parts.append(
        f'<line class="axis" x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + plot_w}" y1="{MARGIN_TOP + plot_h}" '
        f'y2="{MARGIN_TOP + plot_h}"/><line class="axis" x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT}" '
        f'y1="{MARGIN_TOP}" y2="{MARGIN_TOP + plot_h}"/>'
    )
    points = [(x(d), y(v)) for d, v in zip(series.days, series.cny_per_gpu_hour, strict=True)]
    if len(points) > 1:
        joined = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline class="line" points="{joined}"/>')
    for i, ((px, py), day, value) in enumerate(
        zip(points, series.days, series.cny_per_gpu_hour, strict=True)
    ):
        latest = i == len(points) - 1
        label = say("page.chart.point", lang, day=day.isoformat(), amount=money(value))
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{3.5 if latest else 2.5}" '
            f'fill="{PALETTE[1] if latest else PALETTE[0]}"><title>{esc(label)}</title></circle>'
        )
    parts.append(
        f'<text x="{MARGIN_LEFT + plot_w / 2}" y="{CHART_H - 6}" text-anchor="middle">'
        f"{esc(say('page.chart.x_axis', lang))}</text>"
        f'<text transform="translate(11 {MARGIN_TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{esc(say('words.cny_per_gpu_hour', lang))}</text>"
    )
    described = say(
        "page.chart.alt", lang, gpu=series.gpu_model, first=series.days[0].isoformat(),
        last=series.days[-1].isoformat(), start=money(series.cny_per_gpu_hour[0]),
        end=money(series.cny_per_gpu_hour[-1]),
    )  # fmt: skip
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CHART_W} {CHART_H}" '
        f'role="img" aria-label="{esc(described)}" data-gpu="{esc(series.gpu_model)}">{"".join(parts)}</svg>'
    )


def _caption(series: Series, lang: str) -> str:
    latest = money(series.cny_per_gpu_hour[-1])
    first = series.cny_per_gpu_hour[0]
    change = ""
    if len(series.days) > 1 and first:
        pct = (series.cny_per_gpu_hour[-1] / first - 1) * 100
        css = "up" if pct > 0 else "down" if pct < 0 else "muted"
        shown = say("page.chart.change", lang, pct=f"{pct:+.1f}", since=_date_label(series.days[0], lang))
        change = f' <span class="{css}">{esc(shown)}</span>'
    now = say("money.cny_per_gpu_hour", lang, amount=latest)
    return f'<figcaption><span class="gpu">{esc(series.gpu_model)}</span> {esc(now)}{change}</figcaption>'


def _trends(report: Report, lang: str) -> str:
    series = trend_series(report)
    if report.trend is None:
        body = _empty("page.trends.off", lang)
    elif not series or report.as_of is None:
        body = _empty("page.trends.none", lang)
    else:
        last = report.as_of
        first = min(last - dt.timedelta(days=TREND_DAYS - 1), *(s.days[0] for s in series))
        figures = "".join(
            f"<figure>{_caption(s, lang)}{chart_svg(s, first, last, lang)}</figure>" for s in series
        )
        body = f'<div class="charts">{figures}</div>'
    first_day = report.as_of - dt.timedelta(days=TREND_DAYS - 1) if report.as_of else None
    lead = say(
        "page.trends.lead", lang, days=TREND_DAYS, first=first_day.isoformat() if first_day else "–",
        last=report.as_of.isoformat() if report.as_of else "–",
    )  # fmt: skip
    return _section("trends", say("page.trends.title", lang), lead, body)


# --- stock ---------------------------------------------------------------------------------------------

_STATUSES = (StockStatus.AVAILABLE, StockStatus.LOW, StockStatus.SOLD_OUT, StockStatus.UNKNOWN)


def _stock(report: Report, lang: str) -> str:
    frame = report.tables["availability"]
    if frame.empty:
        return _section("stock", say("page.stock.title", lang), say("page.stock.lead", lang),
                        _empty("page.stock.none", lang))  # fmt: skip
    order = [str(m) for m in report.tables["cheapest"]["gpu_model"]]
    models = [*order, *sorted({str(m) for m in frame["gpu_model"]} - set(order))]
    headings = [
        (say("page.col.gpu", lang), False),
        *((word("stock", s.value, lang), True) for s in _STATUSES),
        (say("page.col.idle_gpus", lang), True),
        (say("page.col.where_available", lang), False),
    ]
    rows = []
    for model in models:
        mine = frame[frame["gpu_model"] == model]
        if mine.empty:
            continue
        statuses = mine["stock_status"].astype(str).value_counts()
        # Idle GPUs belong to an instance, whatever billing mode it is priced in: counted once per instance.
        idle = mine.dropna(subset=["idle_gpus"]).groupby(["provider", "region", "instance_type"])["idle_gpus"]
        idle_total = int(idle.max().sum()) if len(idle) else None
        rentable = mine[mine["stock_status"].isin([StockStatus.AVAILABLE.value, StockStatus.LOW.value])]
        where = say("words.list_separator", lang).join(
            dict.fromkeys(f"{word('provider', str(p), lang)} {r}" for p, r in zip(rentable["provider"],
                                                                                 rentable["region"], strict=True))
        )  # fmt: skip
        rows.append(
            [
                f'<span class="gpu">{esc(model)}</span>',
                *(count(statuses.get(s.value, 0)) for s in _STATUSES),
                count(idle_total),
                esc(where) or "–",
            ]
        )
    detail_headings = [
        (say("page.col.gpu", lang), False),
        (say("page.col.offer", lang), False),
        (say("page.col.billing", lang), False),
        (say("page.col.stock", lang), False),
        (say("page.col.idle_total", lang), True),
        (say("page.col.observed", lang), False),
    ]
    details = [
        [
            esc(r["gpu_model"]),
            _offer(r, lang),
            _billing(r["billing"], lang),
            _badge("stock", r["stock_status"], lang),
            f"{count(r.get('idle_gpus'))} / {count(r.get('total_gpus'))}",
            when(r.get("observed_at_utc")),
        ]
        for r in _rows(frame)
    ]
    body = (
        _table(headings, rows, "stock")
        + f"<details><summary>{esc(say('page.stock.details', lang, rows=len(details)))}</summary>"
        + _table(detail_headings, details, "stock-detail")
        + "</details>"
    )
    return _section("stock", say("page.stock.title", lang), say("page.stock.lead", lang), body)


# --- what changed --------------------------------------------------------------------------------------


def _changes(report: Report, lang: str) -> str:
    frame = report.tables["changes"]
    headings = [
        (say("page.col.since", lang), False),
        (say("page.col.gpu", lang), False),
        (say("page.col.offer", lang), False),
        (say("page.col.billing", lang), False),
        (say("page.col.old_price", lang), True),
        (say("page.col.new_price", lang), True),
        (say("page.col.change", lang), True),
        (say("page.col.dates", lang), False),
    ]
    periods = {"day": say("page.since.day", lang), "week": say("page.since.week", lang)}  # data.PERIODS
    rows = []
    for r in _rows(frame)[:MAX_CHANGES]:
        pct = r["change_pct"]
        css = "muted" if _missing(pct) or pct == 0 else "up" if pct > 0 else "down"
        shown = "–" if _missing(pct) else f"{pct:+.2f}%"
        since = str(r["since"])
        rows.append(
            [
                esc(periods.get(since, since)),
                f'<span class="gpu">{esc(r["gpu_model"])}</span>',
                _offer(r, lang),
                _billing(r["billing"], lang),
                money(r.get("old_cny_per_gpu_hour")),
                money(r.get("new_cny_per_gpu_hour")),
                f'<span class="{css}">{shown}</span>',
                f'<span class="nowrap">{_day(r.get("old_on"))} → {_day(r.get("new_on"))}</span>',
            ]
        )
    if rows:
        body = _table(headings, rows, "changes")
        if len(frame) > MAX_CHANGES:
            more = say("page.changes.more", lang, shown=MAX_CHANGES, rows=len(frame))
            body += f'<p class="muted">{esc(more)}</p>'
    else:
        body = _empty("page.changes.none", lang)
    return _section("changes", say("page.changes.title", lang), say("page.changes.lead", lang), body)


# --- the health of each provider's refresh -------------------------------------------------------------


def _health(report: Report, lang: str) -> str:
    frame = report.tables["health"]
    headings = [
        (say("page.col.provider", lang), False),
        (say("page.col.status", lang), False),
        (say("page.col.finished", lang), False),
        (say("page.col.duration", lang), True),
        (say("page.col.offers_seen", lang), True),
        (say("page.col.prices_stored", lang), True),
        (say("page.col.prices_changed", lang), True),
        (say("page.col.error", lang), False),
    ]
    rows = []
    for r in _rows(frame):
        duration = r["duration_s"]
        finished = r.get("finished_at_utc")
        rows.append(
            [
                f'<span class="nowrap">{_provider(r["provider"], lang)}</span>',
                _badge("status", r["status"], lang),
                when(finished if not _missing(finished) else r.get("started_at_utc")),
                "–" if _missing(duration) else say("page.seconds", lang, seconds=f"{float(duration):,.0f}"),
                count(r.get("offers_seen")),
                count(r.get("prices_stored")),
                count(r.get("prices_changed")),
                "" if _missing(r.get("error")) or r["status"] == "never" else _error(r["error"]),
            ]
        )
    failing = [
        str(p) for p, s in zip(frame["provider"], frame["status"], strict=True) if s in PROBLEM_RUN_STATUSES
    ]
    lead = say("page.health.lead", lang)
    if failing:
        names = say("words.list_separator", lang).join(word("provider", p, lang) for p in failing)
        lead += say("words.sentence_gap", lang) + say("page.health.failing", lang, providers=names)
    body = _table(headings, rows, "health") if rows else _empty("page.health.none", lang)
    return _section("health", say("page.health.title", lang), lead, body)


def _error(text: object) -> str:
    return f'<span class="error">{esc(text)}</span>'


# --- the page --------------------------------------------------------------------------------------------


def _section(name: str, title: str, lead: str, body: str) -> str:
    return f'<section id="{name}"><h2>{esc(title)}</h2><p class="lead">{esc(lead)}</p>{body}</section>'


def _empty(key: str, lang: str) -> str:
    return f'<p class="muted empty">{esc(say(key, lang))}</p>'


def render_page(report: Report, lang: str) -> str:
    """The whole page, in ``lang`` ("en" or "zh")."""
    sections = [
        _cheapest(report, lang),
        _trends(report, lang),
        _stock(report, lang),
        _changes(report, lang),
        _health(report, lang),
    ]
    footer = say("page.footer", lang, files=report.file_name("*", "csv"))
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{"zh-CN" if lang == CHINESE else "en"}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(say('page.title', lang, day=report.day.isoformat()))}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"{_header(report, lang)}<main>{''.join(sections)}</main>"
        f"<footer>{esc(footer)}</footer></body></html>\n"
    )


def write_page(report: Report, out_dir: Path, lang: str) -> Path:
    """Write the page to ``out_dir`` (which exists) as ``<day>[_scope]_report.html``, whole or not at all."""
    path = Path(out_dir) / report.file_name(NAME, "html")
    with written_whole(path) as tmp:
        tmp.write_text(render_page(report, lang), encoding="utf-8")
    return path
