"""``planner history``: how one GPU model's prices and availability changed, day by day."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from planner.commands.options import billing_option, format_option, provider_option, variants_option
from planner.output import csv_text, dumps_json, money, table


@click.command()
@click.option("--gpu", required=True, metavar="GPU", help="GPU family (A100) or model (A100-80GB).")
@provider_option
@billing_option
@click.option("--days", type=click.IntRange(1, 36500), default=30, show_default=True, metavar="N")
@variants_option
@format_option
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(path_type=Path),  # checked by planner.plot.check_plot_path: one line, not click's usage
    metavar="FILE",
    help="Also draw the history to FILE (.png, .svg or .pdf): one step line per provider, GPU and billing.",
)
@click.pass_obj
def history(app, gpu, providers, billing, days, include_variants, fmt, plot_path) -> None:  # noqa: ANN001
    """How one GPU model's prices and availability changed, day by day.

    One row per day, provider, GPU model and billing mode: the cheapest and dearest CNY per GPU-hour
    among the instances observed that day, AutoDL's median listing, and the stock stated at the day's
    last refresh. The table folds days on which nothing changed into one row; JSON and CSV keep every day.

    The window is the --days up to today, or up to the newest price when there is none today (the
    bundled snapshot, or no refresh yet): the output then says so, and JSON's "until" is that day.

    --plot FILE also draws it (matplotlib), in CNY per GPU-hour: a line per provider, GPU model and
    billing mode at the day's cheapest instance, shaded up to the dearest, x on sold-out days; a
    subscription dashed, as its price divided by the hours in its period (730 a month). The 12 cheapest
    series are drawn and the rest counted in the title. Standard output is unchanged; one line on
    standard error says what was written. With no price to draw it exits 1 and writes nothing.

    \b
    Examples:
      planner history --gpu A100
      planner history --gpu 4090 --provider autodl --days 90
      planner history --gpu H20 --billing on_demand --format csv
      planner history --gpu A100 --days 365 --billing on_demand --plot a100.png
    """
    if plot_path is not None:  # a bad suffix or folder is refused before SQLAlchemy is even imported
        from planner.plot import check_plot_path

        check_plot_path(plot_path)
    from db.queries import newest_price_day, price_history
    from planner.pricing import OfferQuery

    query = OfferQuery.build([gpu], providers, (), billing, include_variants=include_variants)
    models, names, modes = list(query.gpu_models), list(query.providers), list(query.billing)
    engine, loaded = app.reading_engine()
    if loaded:
        click.echo(f"Database empty: loaded the {loaded.label} ({loaded.rows} prices).", err=True)
    today = dt.datetime.now(dt.UTC).date()
    with engine.connect() as conn:
        newest = newest_price_day(conn, models, names or None, modes or None)
        window = Window.ending(today, newest, days)
        found = price_history(conn, models, window.since, names or None, modes or None)
    if plot_path is not None:
        _plot(found, models, window, plot_path)
    records = [_history_record(r) for r in found]
    if fmt == "json":
        click.echo(dumps_json({"gpu": gpu, "gpu_models": models, "since": window.since, "until": window.until,
                               "until_newest_price": window.early, "days": records}))  # fmt: skip
        return
    if fmt == "csv":
        if window.early:  # standard output stays pure CSV
            click.echo(window.note(), err=True)
        flat = [_flat(r) for r in records]
        columns = list(flat[0]) if flat else ["day", "provider", "gpu_model", "billing"]
        click.echo(csv_text(flat, columns), nl=False)
        return
    if not records:
        click.echo(
            f"No prices for {', '.join(models)} in {window.text}. "
            "Try --days, without --provider/--billing, or `planner refresh`."
        )
        return
    click.echo(render_history(found, models, window))


@dataclass(frozen=True)
class Window:
    """The days shown: ``days`` of them up to ``until``, which is today, or the newest price's day
    (``early``) when there is none today, so old data (the bundled snapshot) is shown, not hidden."""

    days: int
    until: dt.date
    today: dt.date

    @classmethod
    def ending(cls, today: dt.date, newest: dt.date | None, days: int) -> Window:
        return cls(days, newest if newest is not None and newest < today else today, today)

    @property
    def since(self) -> dt.date:
        return self.until - dt.timedelta(days=self.days - 1)

    @property
    def early(self) -> bool:
        return self.until < self.today

    @property
    def text(self) -> str:
        """ "the last 30 day(s)", or "the 30 day(s) to 2026-10-05" when it ends before today."""
        return f"the {self.days} day(s) to {self.until}" if self.early else f"the last {self.days} day(s)"

    def note(self) -> str:
        ago = (self.today - self.until).days
        return (
            f"No price since {self.until} ({ago} day(s) ago): the window ends at the newest price, "
            "not today. `planner refresh` brings today's prices."
        )


def _plot(found: Sequence, models: Sequence[str], window: Window, path: Path) -> None:
    from planner.errors import PlannerError
    from planner.plot import plot_history

    if not found:
        raise PlannerError(
            f"no prices for {', '.join(models)} in {window.text}: nothing to plot, {str(path)!r} not written",
            hint="try a longer --days, no --provider/--billing, or `planner refresh`",
        )
    done = plot_history(found, models, window.days, path, until=window.until if window.early else None)
    left_out = (
        f"; {done.left_out} more left out (the {len(done.series)} cheapest drawn)" if done.left_out else ""
    )
    click.echo(
        f"Wrote {path}: {len(done.series)} series over {done.span_days} day(s) "
        f"(from {done.first_day} to {done.last_day}){left_out}.",
        err=True,
    )


def _history_record(r) -> dict[str, object]:  # noqa: ANN001 - db.queries.HistoryRow
    stock = None
    if r.stock_known or r.idle_gpus is not None:
        stock = {
            "instances_with_stock": r.stock_known,
            "sold_out": r.sold_out,
            "idle_gpus": r.idle_gpus,
            "total_gpus": r.total_gpus,
        }
    return {
        "day": r.day,
        "provider": r.provider,
        "gpu_model": r.gpu_model,
        "billing": r.billing,
        "instances": r.instances,
        "min_cny_per_gpu_hour": r.min_cny_per_gpu_hour,
        "max_cny_per_gpu_hour": r.max_cny_per_gpu_hour,
        "median_cny_per_gpu_hour": r.median_cny_per_gpu_hour,
        "availability": stock,
    }


def _flat(record: dict[str, object]) -> dict[str, object]:
    stock = record["availability"] or {}
    out = {k: v for k, v in record.items() if k != "availability"}
    for key in ("instances_with_stock", "sold_out", "idle_gpus", "total_gpus"):
        out[key] = stock.get(key) if isinstance(stock, dict) else None
    return out


def _stock_cell(r) -> str:  # noqa: ANN001 - db.queries.HistoryRow
    if r.idle_gpus is not None:
        return f"idle {r.idle_gpus}/{r.total_gpus}" if r.total_gpus is not None else f"idle {r.idle_gpus}"
    if not r.stock_known:
        return "-"
    if r.sold_out == 0:
        return f"available ({r.stock_known})"
    if r.sold_out == r.stock_known:
        return f"sold out ({r.stock_known})"
    return f"{r.sold_out}/{r.stock_known} sold out"


def render_history(found: Sequence, models: Sequence[str], window: Window) -> str:
    """Rows per series, oldest first; consecutive days with the same figures fold into one row."""
    with_median = any(r.median_cny_per_gpu_hour is not None for r in found)
    rows: list[list[str]] = []
    series_last: dict[tuple[str, str, str], tuple] = {}
    folded: list[list] = []  # [first_day, last_day, row, figures]
    for r in found:
        series = (r.gpu_model, r.provider, r.billing)
        figures = (r.instances, r.min_cny_per_gpu_hour, r.max_cny_per_gpu_hour, r.median_cny_per_gpu_hour,
                   _stock_cell(r))  # fmt: skip
        previous = series_last.get(series)
        if previous and previous[1] == figures and folded and folded[-1][2] == series:
            folded[-1][1] = r.day
            continue
        change = "-"
        if previous and previous[0].min_cny_per_gpu_hour:
            before = previous[0].min_cny_per_gpu_hour
            delta = (r.min_cny_per_gpu_hour - before) / before * 100
            change = "=" if delta == 0 else f"{delta:+.1f}%"
        series_last[series] = (r, figures)
        folded.append([r.day, r.day, series, r, change])
    for first, last, _series, r, change in folded:
        when = f"{first}" if first == last else f"{first} .. {last:%m-%d}"
        row = [
            when,
            r.provider,
            r.gpu_model,
            r.billing,
            str(r.instances),
            money(r.min_cny_per_gpu_hour),
            money(r.max_cny_per_gpu_hour),
        ]
        if with_median:
            row.append(money(r.median_cny_per_gpu_hour))
        rows.extend([[*row, change, _stock_cell(r)]])
    headers = ["day(s)", "provider", "gpu", "billing", "instances", "min CNY/GPU-h", "max CNY/GPU-h"]
    headers += ["median"] if with_median else []
    headers += ["min change", "stock"]
    right = (4, 5, 6, 7, 8) if with_median else (4, 5, 6, 7)
    lines = [f"History of {', '.join(models)} over {window.text} (UTC days; CNY per GPU-hour):"]
    if window.early:
        lines.append(window.note())
    lines.append(table(rows, headers, align_right=right))
    notes = []
    if with_median:
        notes.append("median: AutoDL's median listing (the min is its cheapest).")
    notes.append("stock: sold out / available among the instances that said so, or idle/total GPUs (AutoDL).")
    lines.extend(["", *notes])
    return "\n".join(lines)
