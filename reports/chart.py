"""The report's chart, and the drawing pieces every chart of ours shares.

``write_chart`` draws the cheapest on-demand CNY per GPU-hour of each GPU model, one point a day over
the report's trend window (``reports.data.trend_frame``; the last point is the model's on-demand
headline, the figure ``gpus --value`` and the cheapest CSV give), as a PNG beside the CSV files: the
headline comparison, so the team sees at a glance which GPU got cheaper. The GPU models are those of
the report's cheapest table that have an on-demand price in the window; at most MAX_LINES of them, the
ones with the most offers (the GPUs most widely sold), named in the subtitle with how many were left out.

``figure``, ``date_axis``, ``palette`` and ``save_figure`` are the recipe ``planner history --plot``
draws with too (DejaVu Sans, no glyph warnings, the Agg canvas without pyplot's global state, one
palette, an atomic save). matplotlib is imported only when drawing, and nothing heavy (pandas,
SQLAlchemy) at all: ``planner history --plot`` imports this module before it opens the database.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from reports.files import written_whole  # the one write-whole recipe, as reports.csvfile uses it
from vocab.words import ENGLISH, say

if TYPE_CHECKING:  # types only: drawing needs no pandas until it draws
    import pandas as pd


class Report(Protocol):
    """What the chart reads of a report (``reports.build.Report``, which imports this module's window)."""

    @property
    def day(self) -> dt.date: ...
    @property
    def as_of(self) -> dt.date | None: ...
    @property
    def tables(self) -> dict[str, pd.DataFrame]: ...
    @property
    def trend(self) -> pd.DataFrame | None: ...

    def file_name(self, table: str, suffix: str = ...) -> str: ...


NAME = "cheapest_trend"  # the file's name after the date: <day>[_scope]_cheapest_trend.png
TREND_DAYS = 30  # the window: the days up to the report's newest price
MAX_LINES = 8  # more lines than this make the chart unreadable; the rest stay in the cheapest CSV
SIZE_PX = (960, 480)  # the PNG, shown at this size in the e-mail
DPI = 100


@dataclass(frozen=True)
class TrendLine:
    """One GPU model: its cheapest on-demand CNY per GPU-hour on each day it had one."""

    gpu_model: str
    offers: int  # its offers in the cheapest table (every billing mode): how the lines are chosen
    days: tuple[dt.date, ...]
    cny_per_gpu_hour: tuple[float, ...]

    @property
    def change(self) -> float | None:
        """The last day's price against the first day's, as a fraction (None with a single day)."""
        if len(self.days) < 2 or not self.cny_per_gpu_hour[0]:
            return None
        return self.cny_per_gpu_hour[-1] / self.cny_per_gpu_hour[0] - 1


@dataclass(frozen=True)
class Trend:
    """What the chart draws: the lines (dearest latest price first), the days, the models left out."""

    lines: tuple[TrendLine, ...]
    left_out: int
    first_day: dt.date  # the first day with a price drawn
    last_day: dt.date  # the report's newest observation: the window ends here
    report_day: dt.date | None = None  # the report's own (calendar) day, when known

    @property
    def window_start(self) -> dt.date:
        """The window's first day: TREND_DAYS up to the newest price, drawn or not."""
        return self.last_day - dt.timedelta(days=TREND_DAYS - 1)

    @property
    def stale_days(self) -> int:
        """Days from the newest price to the report's day beyond the one a time zone explains; 0 when
        fresh. A report on old data (the bundled snapshot, failed refreshes) says so in its title."""
        if self.report_day is None:
            return 0
        return max(0, (self.report_day - self.last_day).days - 1)

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(line.gpu_model for line in self.lines)

    @property
    def single_day(self) -> bool:
        return self.first_day == self.last_day


@dataclass(frozen=True)
class Chart:
    """The outcome: the PNG written (None when not drawn), what it shows, and ``note``, a sentence for
    the summary when a chart was expected but not drawn (None when drawn, turned off, or no prices)."""

    path: Path | None = None
    trend: Trend | None = None
    note: str | None = None
    failed: bool = False  # drawing raised: the note says why


def select_trend(report: Report, max_lines: int = MAX_LINES) -> Trend | None:
    """The lines to draw: the GPU models of the cheapest table with an on-demand price in the window,
    the ``max_lines`` with the most offers (then the cheapest latest price, then by name). None when no
    model has one, or when the report was built without its trend (``build_report(chart=False)``)."""
    frame = report.trend
    if frame is None or report.as_of is None:
        return None
    offers = dict(
        zip(report.tables["cheapest"]["gpu_model"], report.tables["cheapest"]["offers"], strict=True)
    )
    lines = [
        TrendLine(
            gpu_model=str(model),
            offers=int(offers[model]),
            days=tuple(d.date() for d in rows["day"]),
            cny_per_gpu_hour=tuple(float(v) for v in rows["cny_per_gpu_hour"]),
        )
        for model, rows in frame.groupby("gpu_model", sort=True)
        if model in offers
    ]
    if not lines:
        return None
    lines.sort(key=lambda line: (-line.offers, line.cny_per_gpu_hour[-1], line.gpu_model))
    drawn = sorted(lines[:max_lines], key=lambda line: -line.cny_per_gpu_hour[-1])
    first = min(line.days[0] for line in drawn)
    return Trend(tuple(drawn), max(0, len(lines) - max_lines), first, report.as_of, report.day)


def write_chart(report: Report, out_dir: Path) -> Chart:
    """Draw the report's chart to ``out_dir`` (which exists) when there is something to draw.

    No chart and no note when the report has no trend (turned off) or no price at all; no chart and a
    note when none of its GPU models has an on-demand price in the TREND_DAYS to its newest price. A
    single day is drawn as points. Drawing errors (matplotlib missing, a full disk) are raised: the
    caller decides what they cost; the PNG is written whole or not at all.
    """
    if report.trend is None or report.as_of is None or report.tables["prices"].empty:
        return Chart()
    trend = select_trend(report)
    if trend is None:
        since = report.as_of - dt.timedelta(days=TREND_DAYS - 1)
        return Chart(
            note=f"No price chart: none of these GPU models has an on-demand price from {since} to "
            f"{report.as_of}."
        )
    path = Path(out_dir) / report.file_name(NAME, "png")
    draw_trend(trend, path)
    return Chart(path, trend)


def why_not_drawn(err: BaseException) -> str:
    """One line on a drawing failure, for a warning and the e-mail."""
    if isinstance(err, ImportError) and (err.name or "matplotlib").partition(".")[0] == "matplotlib":
        return "matplotlib is not installed (pip install matplotlib)"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:200]}" if text else type(err).__name__


def alt_text(trend: Trend, lang: str = ENGLISH) -> str:
    """The chart in words (the e-mail's alt text): each model's first and last price, in ``lang``."""
    values = [
        f"{line.gpu_model} {line.cny_per_gpu_hour[0]:,.2f}"
        + ("" if len(line.days) < 2 else say("chart.alt_to", lang, last=f"{line.cny_per_gpu_hour[-1]:,.2f}"))
        for line in trend.lines
    ]
    joined = say("words.item_separator", lang).join(values)
    return say("chart.alt", lang, first=trend.first_day, last=trend.last_day, values=joined)


def draw_trend(trend: Trend, path: Path) -> None:
    """Draw ``trend`` to ``path`` as a PNG (SIZE_PX), atomically."""
    with figure(SIZE_PX[0] / DPI, SIZE_PX[1] / DPI, DPI) as fig:
        _draw(fig, trend)
        save_figure(fig, path, "png")


def _draw(fig: Any, trend: Trend) -> None:
    ax = fig.add_subplot()
    colors = palette()
    for i, line in enumerate(trend.lines):
        ax.plot(
            line.days,
            line.cny_per_gpu_hour,
            color=colors[i % len(colors)],
            linewidth=1.8,
            marker="o",
            markersize=3.5 if len(line.days) > 1 else 6,
            label=_label(line),
        )
    date_axis(ax)
    start = min(trend.first_day, trend.last_day - dt.timedelta(days=6))  # at least a week wide
    half_day = dt.timedelta(hours=12)  # points clear of the edges (a date plus hours is still that date)
    ax.set_xlim(_midnight(start) - half_day, _midnight(trend.last_day) + half_day)
    top = max(max(line.cny_per_gpu_hour) for line in trend.lines)
    ax.set_ylim(0, top * 1.1)
    ax.set_ylabel("CNY per GPU-hour (on demand)")
    ax.set_xlabel("UTC day")
    ax.grid(True, color="#e0e0e0", linewidth=0.7)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(title(trend), loc="left", fontsize=12, pad=46 if trend.stale_days else 34)
    subtitle = ax.text(0, 1.015, _subtitle(trend), transform=ax.transAxes, fontsize=9, color="#555555",
                       va="bottom", linespacing=1.4)  # fmt: skip
    subtitle.set_in_layout(False)  # two or three short lines in the title's pad: the axes keep their size
    fig.legend(loc="outside right upper", fontsize=8, frameon=False, alignment="left",
               title=_legend_title(trend), title_fontsize=8)  # fmt: skip


def title(trend: Trend) -> str:
    """The chart's title with its real dates, the TREND_DAYS up to the newest price: never "the last
    30 days" of data that stopped (the subtitle says how long before the report it did)."""
    return f"Cheapest on-demand price per GPU-hour, {trend.window_start} to {trend.last_day}"


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time())


def _subtitle(trend: Trend) -> str:
    if trend.single_day:
        when = f"; one day so far: {trend.last_day}"
    else:
        when = f", from {trend.first_day} to {trend.last_day}"
    count = len(trend.lines)
    if trend.left_out:
        chosen = (
            f"The {count} GPU models with the most offers "
            f"(of {count + trend.left_out} priced on demand in these days)"
        )
    else:
        chosen = f"Every GPU model with an on-demand price in these days ({count})"
    stale = ""
    if trend.stale_days:
        stale = f"\nNo newer price: the newest is {trend.stale_days + 1} days older than this report"
    return f"Each day's cheapest on-demand offer across providers{when}\n{chosen}{stale}"


def _legend_title(trend: Trend) -> str:
    # the last point is the on-demand headline: the cheapest offer that can be rented now (reports.data)
    if trend.single_day:
        return "CNY/GPU-h on demand, now"
    return f"CNY/GPU-h on demand, now\n(change since {trend.first_day:%b %d})"


def _label(line: TrendLine) -> str:
    change = line.change
    shown = "" if change is None else f" ({change:+.1%})".replace("-", "\u2212")
    return f"{line.gpu_model}  {line.cny_per_gpu_hour[-1]:,.2f}{shown}"


@contextmanager
def figure(width_in: float, height_in: float, dpi: int) -> Iterator[Any]:
    """A matplotlib Figure on the Agg canvas, without pyplot's global state; drawing and saving belong
    inside the block. Raises ImportError when matplotlib is not installed."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # DejaVu Sans ships with matplotlib: no font lookup, no "font not found" warning. CJK glyphs it lacks
    # would be boxes (the labels are canonical provider and GPU names, which are ASCII).
    rc = {"font.family": "DejaVu Sans", "font.size": 9, "svg.fonttype": "path", "pdf.fonttype": 42}
    with warnings.catch_warnings(), matplotlib.rc_context(rc):  # type: ignore[arg-type]
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from", category=UserWarning)
        fig = Figure(figsize=(width_in, height_in), dpi=dpi, layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def date_axis(ax: Any) -> None:
    """Days on the x axis as "Nov 24" (not a bare 24 under a "2026-Dec" offset), months as "Sep",
    years as "2026"."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(minticks=4, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(
        locator,
        formats=["%Y", "%b", "%b %d", "%H:%M", "%H:%M", "%S.%f"],
        zero_formats=["", "%Y", "%b %d", "%b %d", "%H:%M", "%H:%M"],
        offset_formats=["", "%Y", "%Y", "%Y-%m-%d", "%Y-%m-%d", "%Y-%m-%d %H:%M"],
    ))  # fmt: skip


def palette() -> list[object]:
    """tab10, then black and a dark gold: twelve colours told apart on a white background."""
    from matplotlib import color_sequences

    return [*color_sequences["tab10"], "#000000", "#a6761d"]


def save_figure(fig: Any, target: Path, fmt: str) -> None:
    """Write beside the target, then rename: the target is whole or untouched, and no temp file stays.
    Raises OSError."""
    with written_whole(target) as tmp, open(tmp, "wb") as fh:
        fig.savefig(fh, format=fmt)
