"""``planner history``: how one GPU model's prices and availability changed, day by day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    format_option,
    provider_option,
    scope_option,
    single_gpu_option,
    variants_option,
)
from planner.errors import PlannerError
from planner.views.history import render_history
from planner.views.plot import check_plot_path, plot_history


@click.command()
@single_gpu_option("GPU family (A100) or model (A100-80GB).")
@provider_option
@billing_option
@click.option(
    "--days",
    type=click.IntRange(1, 36500),
    default=30,
    show_default=True,
    metavar="N",
    help="The history window: N days, ending today (or at the newest price when there is none today).",
)
@variants_option
@scope_option
@format_option
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(
        path_type=Path
    ),  # checked by planner.views.plot.check_plot_path: one line, not click's usage
    metavar="FILE",
    help="Also draw the history to FILE (.png, .svg or .pdf): one step line per provider, GPU and billing.",
)
@click.pass_obj
def history(app, gpu, providers, billing, days, include_variants, scope, fmt, plot_path) -> None:  # noqa: ANN001
    """How one GPU model's prices and availability changed, day by day.

    One row per day, provider, GPU model and billing mode: the cheapest and dearest CNY per GPU-hour
    among the instances observed that day, AutoDL's median listing, and the stock stated at the day's
    last refresh. The table folds days on which nothing changed into one row; JSON and CSV keep every day.

    Mainland China regions only unless --scope all (or [quote] scope), as in quote; the regions left
    out are named in one line.

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
      planner history --gpu T4 --scope all
    """
    if plot_path is not None:  # a bad suffix or folder is refused before SQLAlchemy is even imported
        check_plot_path(plot_path)
    from planner.answers.history import history_query, price_history

    query = history_query(gpu, providers, billing, include_variants, scope, app.config)
    found = price_history(reading_engine(app), gpu, query, days, dt.datetime.now(dt.UTC).date())
    if plot_path is not None:
        _plot(found, plot_path)
    if fmt == "csv" and found.window.early:  # standard output stays pure CSV
        click.echo(found.window.note(), err=True)
    emit(found, fmt, table=render_history, csv=_csv)


def _csv(found) -> tuple[list[dict[str, object]], list[str]]:  # noqa: ANN001 - planner.answers.history.History
    flat = found.flat()
    return flat, list(flat[0]) if flat else ["day", "provider", "gpu_model", "billing"]


def _plot(history, path: Path) -> None:  # noqa: ANN001 - planner.answers.history.History

    found, models, window = history.rows, history.gpu_models, history.window
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
