"""``planner history --plot``: one GPU's price history drawn as step lines, CNY per GPU-hour over days.

A series is one GPU model at one provider on one billing mode, as ``db.queries.price_history`` returns
it: the line is the day's cheapest instance, the shaded band reaches up to the dearest. The figures are
the stored CNY per GPU-hour (converted with [fx] and divided by the instance's GPUs when the price was
stored), so instances of different sizes and currencies compare. Subscription modes (daily to yearly)
are drawn dashed as their price divided by the hours in their period (730 a month, ``planner.billing``):
what a GPU-hour costs if the GPU runs around the clock, the same figure the history table shows.

The legend lists at most MAX_SERIES series, the cheapest by their latest price; the subtitle counts
the rest. matplotlib is imported only when drawing, so ``planner quote`` and ``--help`` never load it.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.billing import SUBSCRIPTION_MODES, hours_per_unit
from planner.errors import PlannerError, UsageError, write_error
from planner.wording import Phrase
from reports.chart import date_axis, figure, palette, save_figure

if TYPE_CHECKING:
    from planner.answers.history import HistoryDay

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}  # suffix -> matplotlib format
MAX_SERIES = 12  # the cheapest this many series are drawn; more make an unreadable legend
GAP_DAYS = 7  # a longer gap between two observations is drawn dotted: nothing is known in between
MARKERS_UP_TO = 60  # observations in a series; above this, markers only on isolated points
ONE_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Series:
    """One line of the plot: a GPU model at a provider on a billing mode, one point per observed day."""

    provider: str
    gpu_model: str
    billing: str
    days: tuple[dt.date, ...]
    min_cny_per_gpu_hour: tuple[float, ...]  # the day's cheapest instance
    max_cny_per_gpu_hour: tuple[float, ...]  # the day's dearest instance
    sold_out_days: tuple[dt.date, ...]  # every instance that stated its stock was sold out

    @property
    def subscription(self) -> bool:
        return self.billing in SUBSCRIPTION_MODES

    @property
    def latest_cny_per_gpu_hour(self) -> float:
        return self.min_cny_per_gpu_hour[-1]


@dataclass(frozen=True)
class PlotSummary:
    """What was drawn: the series (cheapest latest price first), how many were left out, the days."""

    path: Path
    series: tuple[Series, ...]
    left_out: int
    first_day: dt.date
    last_day: dt.date

    @property
    def span_days(self) -> int:
        return (self.last_day - self.first_day).days + 1


def check_plot_path(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path and its matplotlib format, or a UsageError: unknown suffix, missing or read-only folder."""
    target = Path(path).expanduser()
    fmt = FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise UsageError(
            f"cannot plot to {str(path)!r}: the file name must end in .png, .svg or .pdf",
            hint=Phrase("e.g. {plot} history.png"),
        )
    folder = target.parent
    if target.is_dir():
        raise UsageError(f"cannot plot to {str(path)!r}: it is a folder", hint="give a file name")
    if not folder.is_dir():
        raise UsageError(
            f"cannot plot to {str(path)!r}: the folder {str(folder)!r} does not exist",
            hint="create it first or choose another path",
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(
            f"cannot plot to {str(path)!r}: the folder {str(folder)!r} is not writable",
            hint="choose another path",
        )
    return target, fmt


def history_series(rows: Sequence[HistoryDay], max_series: int = MAX_SERIES) -> tuple[list[Series], int]:
    """``HistoryDay`` rows grouped into series, the ``max_series`` cheapest (by their latest
    day's cheapest instance) first, and how many series were left out."""
    grouped: dict[tuple[str, str, str], list[HistoryDay]] = {}
    for r in rows:
        grouped.setdefault((r.provider, r.gpu_model, r.billing), []).append(r)
    series = []
    for (provider, model, billing), found in grouped.items():
        found.sort(key=lambda r: r.day)
        series.append(
            Series(
                provider=provider,
                gpu_model=model,
                billing=billing,
                days=tuple(r.day for r in found),
                min_cny_per_gpu_hour=tuple(float(r.min_cny_per_gpu_hour) for r in found),
                max_cny_per_gpu_hour=tuple(float(r.max_cny_per_gpu_hour) for r in found),
                sold_out_days=tuple(r.day for r in found if _sold_out(r)),
            )
        )
    series.sort(key=lambda s: (s.latest_cny_per_gpu_hour, s.provider, s.gpu_model, s.billing))
    return series[:max_series], max(0, len(series) - max_series)


def _sold_out(r: HistoryDay) -> bool:
    if r.idle_gpus is not None:
        return r.idle_gpus == 0
    return bool(r.stock_known) and r.sold_out == r.stock_known


def plot_history(
    rows: Sequence[HistoryDay],
    models: Sequence[str],
    days: int,
    path: str | os.PathLike[str],
    max_series: int = MAX_SERIES,
    until: dt.date | None = None,
) -> PlotSummary:
    """Draw ``rows`` (``db.queries.price_history``) to ``path`` (.png, .svg or .pdf), atomically: a
    failure leaves no file and an existing one untouched. ``days`` is the window asked for and
    ``until`` its last day when that is not today (the newest price): both go in the title."""
    target, fmt = check_plot_path(path)
    series, left_out = history_series(rows, max_series)
    if not series:
        raise PlannerError(
            f"nothing to plot: no prices for {', '.join(models)}", hint=Phrase("try a longer {days}")
        )
    first = min(s.days[0] for s in series)
    last = max(s.days[-1] for s in series)
    summary = PlotSummary(target, tuple(series), left_out, first, last)
    try:
        import matplotlib  # noqa: F401 - checked here, so the error names the option
    except ImportError:
        raise PlannerError(
            Phrase("{plot} needs matplotlib, which is not installed"), hint="pip install matplotlib"
        ) from None
    with figure(11, 5.6, dpi=110) as fig:  # reports.chart: the recipe the report's chart shares
        _draw(fig, summary, models, _window_text(days, until), max_series)
        _save_atomically(fig, target, fmt)
    return summary


def _window_text(days: int, until: dt.date | None) -> str:
    """ "last 30 days", or "30 days to 2026-10-05 (the newest price)" for a window ending before today."""
    span = f"{days} day{'s' if days != 1 else ''}"
    return f"last {span}" if until is None else f"{span} to {until} (the newest price)"


def _draw(fig, summary: PlotSummary, models: Sequence[str], window: str, max_series: int) -> None:  # noqa: ANN001
    ax = fig.add_subplot()
    colors = palette()
    several_models = len({s.gpu_model for s in summary.series}) > 1
    handles = [
        _draw_series(ax, s, colors[i % len(colors)], _label(s, several_models))
        for i, s in enumerate(summary.series)
    ]
    date_axis(ax)
    start = min(summary.first_day, summary.last_day - dt.timedelta(days=6))  # at least a week wide
    end = summary.last_day + ONE_DAY  # the last day's step ends here
    margin = max(ONE_DAY, (end - start) * 0.015)
    ax.set_xlim(start - margin, end + margin)
    ax.set_ylim(0, max(max(s.max_cny_per_gpu_hour) for s in summary.series) * 1.1)
    ax.set_ylabel("CNY per GPU-hour")
    ax.set_xlabel("UTC day")
    ax.grid(True, color="#e0e0e0", linewidth=0.7)
    ax.spines[["top", "right"]].set_visible(False)
    drawn = {s.gpu_model for s in summary.series}  # the models with a price, in the catalog's order
    shown_models = [m for m in models if m in drawn] + sorted(drawn - set(models))
    ax.set_title(f"{', '.join(shown_models)}: price per GPU-hour, {window}", loc="left", fontsize=12, pad=22)
    shown = f"{len(summary.series)} series"
    if summary.left_out:
        shown = f"the {max_series} cheapest series; {summary.left_out} more left out"
        shown += " (narrow by provider or billing mode)"
    ax.text(0, 1.015, f"{summary.first_day} to {summary.last_day} · {shown}", transform=ax.transAxes,
            fontsize=9, color="#555555", va="bottom")  # fmt: skip
    # Dearest first, so the legend reads top to bottom like the lines' latest prices.
    fig.legend(handles=handles[::-1], loc="outside right upper", fontsize=8, frameon=False,
               title="by latest price", title_fontsize=8, alignment="left", handlelength=2.6)  # fmt: skip
    fig.legend(handles=_key(summary), loc="outside right lower", fontsize=8, frameon=False)


def _draw_series(ax, s: Series, color: object, label: str):  # noqa: ANN001, ANN202 - matplotlib objects
    """Step lines at the day's cheapest instance, a band up to the dearest, dotted across long gaps."""
    style = "--" if s.subscription else "-"
    few = len(s.days) <= MARKERS_UP_TO
    handles = []
    previous = None
    for xs, lows, highs in _segments(s):
        isolated = len(xs) == 2  # one observation and its closing point
        (line,) = ax.plot(
            xs, lows, drawstyle="steps-post", color=color, linestyle=style, linewidth=1.8,
            marker="o" if few or isolated else None, markersize=3.5, markevery=list(range(len(xs) - 1)),
        )  # fmt: skip
        handles.append(line)
        if isolated and highs[0] > lows[0]:
            ax.vlines(xs[0], lows[0], highs[0], color=color, alpha=0.35, linewidth=3)
        elif any(h > lo for h, lo in zip(highs, lows, strict=True)):
            ax.fill_between(xs, lows, highs, step="post", color=color, alpha=0.15, linewidth=0)
        if previous:  # not observed in between: a thin dotted step, not a claim about those days
            ax.plot([previous[0], xs[0]], [previous[1], lows[0]], drawstyle="steps-post", color=color,
                    linestyle=":", linewidth=1, alpha=0.7)  # fmt: skip
        previous = (xs[-1], lows[-1])
    if s.sold_out_days:
        price = dict(zip(s.days, s.min_cny_per_gpu_hour, strict=True))
        ax.scatter(s.sold_out_days, [price[d] for d in s.sold_out_days], marker="x", s=40, color=color,
                   linewidths=1.6, zorder=3)  # fmt: skip
    handles[0].set_label(label)
    return handles[0]


def _key(summary: PlotSummary) -> list[Any]:
    """What the line styles mean, only those the plot uses."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    grey = "#555555"
    marked = any(len(s.days) <= MARKERS_UP_TO for s in summary.series)
    cheapest = Line2D([], [], color=grey, marker="o" if marked else None, markersize=3.5,
                      label="the day's cheapest instance")  # fmt: skip
    key: list[Any] = [cheapest]
    if any(
        h > lo
        for s in summary.series
        for h, lo in zip(s.max_cny_per_gpu_hour, s.min_cny_per_gpu_hour, strict=True)
    ):
        key.append(Patch(color=grey, alpha=0.25, label="up to the day's dearest"))
    if any(len(_segments(s)) > 1 for s in summary.series):
        key.append(Line2D([], [], color=grey, linestyle=":", label=f"no price for over {GAP_DAYS} days"))
    if any(s.subscription for s in summary.series):
        key.append(Line2D([], [], color=grey, linestyle="--",
                          label="subscription: price ÷ hours\nin its period (used 24 h a day)"))  # fmt: skip
    if any(s.sold_out_days for s in summary.series):
        key.append(Line2D([], [], color=grey, marker="x", linestyle="", label="sold out"))
    return key


def _segments(s: Series) -> list[tuple[list[dt.date], list[float], list[float]]]:
    """Runs of observations no more than GAP_DAYS apart; each ends one day after its last observation,
    so a step covers its whole UTC day (the closing point repeats the last price and has no marker)."""
    out: list[tuple[list[dt.date], list[float], list[float]]] = []
    for day, low, high in zip(s.days, s.min_cny_per_gpu_hour, s.max_cny_per_gpu_hour, strict=True):
        if out and (day - out[-1][0][-1]).days <= GAP_DAYS:
            xs, lows, highs = out[-1]
        else:
            xs, lows, highs = [], [], []
            out.append((xs, lows, highs))
        xs.append(day)
        lows.append(low)
        highs.append(high)
    for xs, lows, highs in out:
        xs.append(xs[-1] + ONE_DAY)
        lows.append(lows[-1])
        highs.append(highs[-1])
    return out


def _label(s: Series, with_model: bool) -> str:
    billing = s.billing
    if s.subscription:
        billing += f" ÷ {hours_per_unit(s.billing):,} h"
    return " · ".join([s.provider, *([s.gpu_model] if with_model else []), billing])


def _save_atomically(fig, target: Path, fmt: str) -> None:  # noqa: ANN001
    """Write beside the target, then rename: the target is whole or untouched, and no temp file stays."""
    try:
        save_figure(fig, target, fmt)
    except OSError as err:
        raise write_error(
            f"cannot write {str(target)!r}: {err.strerror or err}; nothing was written",
            err,
            hint="check the disk has room",
        ) from None
