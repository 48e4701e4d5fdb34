"""``planner history``: how one GPU model's prices and availability changed, day by day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    chosen_scope,
    format_option,
    provider_option,
    scope_option,
    single_gpu_option,
    variants_option,
)
from planner.output import money, table


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
        from planner.views.plot import check_plot_path

        check_plot_path(plot_path)
    from planner.answers.history import price_history
    from planner.pricing.cost import OfferQuery

    query = OfferQuery.build(
        [gpu], providers, (), billing, include_variants=include_variants, scope=chosen_scope(app, scope)
    )
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
    from planner.errors import PlannerError
    from planner.views.plot import plot_history

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


def _stock_cell(r) -> str:  # noqa: ANN001 - db.queries.HistoryRow
    if r.idle_gpus is not None:
        idle = f"idle {r.idle_gpus}/{r.total_gpus}" if r.total_gpus is not None else f"idle {r.idle_gpus}"
        most = r.max_idle_gpus_per_machine
        return idle if most is None else f"{idle}, ≤{most} on one machine"
    if not r.stock_known:
        return "-"
    if r.sold_out == 0:
        return f"available ({r.stock_known})"
    if r.sold_out == r.stock_known:
        return f"sold out ({r.stock_known})"
    return f"{r.sold_out}/{r.stock_known} sold out"


def render_history(history) -> str:  # noqa: ANN001 - planner.answers.history.History
    """Rows per series, oldest first; consecutive days with the same figures fold into one row."""
    found, models, window = history.rows, history.gpu_models, history.window
    if not found:
        return (
            f"No prices for {', '.join(models)} in {window.text}. "
            "Try --days, without --provider/--billing, or `planner refresh`."
        ) + "".join(f"\n{line}" for line in _outside_lines(history))
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
    lines.extend(["", *notes, *_outside_lines(history)])
    return "\n".join(lines)


def _outside_lines(history) -> list[str]:  # noqa: ANN001 - planner.answers.history.History
    """One line naming the priced regions the scope left out, when there are any."""
    from planner.pricing.query import scope_words

    if not history.outside:
        return []
    return [
        f"Left out, outside {scope_words(history.scope)}: {', '.join(history.outside)} (use --scope all)."
    ]
