"""``planner quote``: the cost of a whole job on every instance that carries the GPU."""

from __future__ import annotations

import click

from planner.commands.arguments import Count
from planner.commands.options import (
    billing_option,
    format_option,
    provider_option,
    region_option,
    variants_option,
)
from planner.output import csv_text, dumps_json, money, short, table
from planner.quote import Option, Quote, QuoteRequest
from planner.recent import check_basis

CSV_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpus_per_instance",
    "instances",
    "idle_gpus",
    "billing",
    "unit_price",
    "price_basis",
    "latest_unit_price",
    "unit",
    "currency",
    "units_paid",
    "total_cny",
    "cny_per_gpu_hour",
    "observed_at",
    "source",
    "from_snapshot",
    "china_variant",
    "gpu_note",
    "interruptible",
    "subscription_breakeven_hours_per_month",
    "median_unit_price",
    "stock_status",
    "stock_idle_gpus",
    "stock_total_gpus",
    "stock_observed_at",
    "unavailable",
    "history_days",
    "history_observations",
    "history_min",
    "history_median",
    "history_max",
    "history_first",
    "history_last",
    "trend",
)


@click.command()
@click.option("--gpu", required=True, metavar="GPU", help="GPU family (A100) or model (A100-80GB).")
@click.option("--hours", required=True, type=Count("500"), metavar="H", help="Wall-clock hours the job runs.")
@click.option(
    "--gpus",
    "gpu_count",
    type=int,
    default=1,
    show_default=True,
    metavar="N",
    help="GPUs the job needs at once.",
)
@click.option(
    "--days",
    type=int,
    metavar="D",
    help="Calendar days the job is spread over (default: the fewest that hold H hours).",
)
@provider_option
@region_option
@billing_option
@click.option("--top", type=int, metavar="K", help="Show the K cheapest options (default from [quote] top).")
@click.option(
    "--price-basis",
    metavar="BASIS",
    help="Cost on each option's latest price (default), or its 30-day median or min: latest|median|min.",
)
@variants_option
@format_option
@click.pass_obj
def quote(
    app, gpu, hours, gpu_count, days, providers, regions, billing, top, price_basis, include_variants, fmt
) -> None:  # noqa: ANN001, E501
    """The cheapest provider, instance and billing mode for a job of N GPUs for H hours.

    Every instance carrying the GPU is costed on each billing mode it is sold on (whole instances,
    whole subscription periods, Tencent's hourly tiers) and shown once, on its cheapest mode.
    Spot prices appear only with --billing spot. China variants only with --include-variants.
    Each option shows its 30-day min-median-max and trend (up, down or flat); --price-basis median or
    min costs the job on those instead of the latest price, where an option has the history.

    \b
    Examples:
      planner quote --gpu A100 --hours 500
      planner quote --gpu H800 --gpus 8 --hours 300 --days 30
      planner quote --gpu A100-80GB --hours 100 --provider aliyun --format json
      planner quote --gpu RTX4090 --hours 200 --price-basis median
    """
    from planner.quote import quote as run_quote

    settings = app.config.section("quote")
    request = QuoteRequest(
        gpu=gpu,
        hours=hours,
        gpus=gpu_count,
        days=days,
        providers=providers,
        regions=regions,
        billing=billing,
        top=top if top is not None else settings["top"],
        include_variants=include_variants,
        history_days=settings["history_days"],
        price_basis=price_basis
        if price_basis is not None
        else check_basis(settings["price_basis"], "[quote] price_basis in the config"),
    )
    from planner.quote import validate

    validate(request)  # refuse bad arguments before touching the database
    engine, loaded = app.reading_engine()
    if loaded:
        click.echo(f"Database empty: loaded the {loaded.label} ({loaded.rows} prices).", err=True)
    with engine.connect() as conn:
        result = run_quote(conn, request, app.config.section("fx"))
    if fmt == "json":
        click.echo(dumps_json(result.to_dict()))
    elif fmt == "csv":
        click.echo(csv_text([_csv_row(o) for o in result.options], CSV_COLUMNS), nl=False)
    else:
        click.echo(render_table(result))


def _csv_row(option: Option) -> dict[str, object]:
    row = option.to_dict()
    stock = option.availability
    row["stock_status"] = stock.stock_status if stock else None
    row["stock_idle_gpus"] = stock.idle_gpus if stock else None
    row["stock_total_gpus"] = stock.total_gpus if stock else None
    row["stock_observed_at"] = stock.observed_at if stock else None
    recent = option.history
    row["history_days"] = recent.days if recent else None
    row["history_observations"] = recent.observations if recent else None
    row["history_min"] = recent.min if recent else None
    row["history_median"] = recent.median if recent else None
    row["history_max"] = recent.max if recent else None
    row["history_first"] = recent.first if recent else None
    row["history_last"] = recent.last if recent else None
    return row


def stock_text(stock, needed: int = 1) -> str:  # noqa: ANN001 - db.queries.Availability | None
    """A table cell: "idle now 3/32", "sold out", "available" or "-" ("<8 needed" when short)."""
    if stock is None:
        return "-"
    if stock.idle_gpus is not None:
        total = f"/{stock.total_gpus}" if stock.total_gpus is not None else ""
        if not stock.idle_gpus:
            return f"sold out (0{total} idle)"
        short = f" (<{needed} needed)" if stock.idle_gpus < needed else ""
        return f"idle now {stock.idle_gpus}{total}{short}"
    return {"sold_out": "sold out", "available": "available"}.get(stock.stock_status or "", "-")


def render_table(result: Quote) -> str:
    r = result.request
    models = ", ".join(result.gpu_models) + (
        f" + variants {', '.join(result.variants)}" if result.variants else ""
    )
    lines = [f"Quote: {r.gpus} x {r.gpu} ({models}) for {r.hours:g} h over {result.days} day(s)"]
    if not result.options:
        lines.append("No prices match. Try without filters, `planner prices`, or `planner refresh`.")
        return "\n".join(lines)
    if result.from_snapshot:
        lines.append(
            "Prices from the bundled snapshot (observed up to "
            f"{result.as_of:%Y-%m-%d}); run `planner refresh` for today's prices."
        )
    with_history = any(o.history for o in result.options)
    if r.price_basis != "latest":
        if with_history:
            lines.append(
                f"Costed on each option's {r.history_days}-day {r.price_basis} price; '(latest)' marks "
                "options with fewer than 2 prices in that window, costed on their latest price."
            )
        else:
            lines.append(
                f"No option has 2 or more prices in its last {r.history_days} days: costed on the latest "
                "prices (history builds up with each `planner refresh`)."
            )
    with_stock = any(o.availability for o in result.options)
    rows = [_row(i, o, with_stock, with_history, r) for i, o in enumerate(result.options, 1)]
    headers = [
        "#",
        "provider",
        "region",
        "instance",
        "gpu",
        "gpus x n",
        "billing",
        "unit price",
        "total CNY",
        "CNY/GPU-h",
        *(["stock"] if with_stock else []),
        *([f"{r.history_days}d min-med-max", "trend"] if with_history else []),
        "observed",
        "source",
    ]
    lines.append(table(rows, headers, align_right=(0, 7, 8, 9)))
    best = result.recommendation
    assert best is not None
    lines.append("")
    passed = result.options[: result.options.index(best)]
    if passed:
        lines.append(
            f"{len(passed)} cheaper option(s) sold out or short of idle GPUs at their last refresh "
            f"(e.g. {passed[0].provider} {passed[0].instance_type}); not recommended."
        )
    lines.append(
        f"Recommendation: {best.provider} {best.instance_type} ({best.region}), {best.instances} instance(s) "
        f"on {best.billing}: CNY {money(best.total_cny)} in total, CNY {money(best.cny_per_gpu_hour)} per GPU-hour."
    )
    if best.subscription_breakeven_hours_per_month is not None:
        lines.append(
            f"On this instance a monthly subscription beats on-demand above "
            f"{best.subscription_breakeven_hours_per_month} hours per month."
        )
    else:
        other = next(
            (o for o in result.options if o.subscription_breakeven_hours_per_month is not None), None
        )
        if other:
            lines.append(
                f"On {other.provider} {other.instance_type}, monthly beats on-demand above "
                f"{other.subscription_breakeven_hours_per_month} hours per month."
            )
    notes = _notes(result.options)
    if notes:
        lines.append("")
        lines.extend(notes)
    if result.considered > len(result.options):
        lines.append(f"({result.considered - len(result.options)} more option(s); use --top to see them.)")
    return "\n".join(lines)


def _row(index: int, o: Option, with_stock: bool, with_history: bool, r: QuoteRequest) -> list[str]:
    marks = (
        ("*" if o.gpu_note else "") + ("(V)" if o.is_variant else "") + ("(spot)" if o.interruptible else "")
    )
    history = "-"
    if o.history:
        history = f"{money(o.history.min)}-{money(o.history.median)}-{money(o.history.max)}"
    fell_back = " (latest)" if with_history and o.price_basis != r.price_basis else ""
    return [
        str(index),
        o.provider,
        short(o.region, 16),
        short(o.instance_type, 26),
        o.gpu_model + marks,
        f"{o.gpus_per_instance:g} x {o.instances}",
        o.billing,
        f"{money(o.unit_price)}/{o.unit}{fell_back}",
        money(o.total_cny),
        money(o.cny_per_gpu_hour),
        *([stock_text(o.availability, r.gpus)] if with_stock else []),
        *([history, o.history.trend if o.history else "-"] if with_history else []),
        f"{o.observed_at:%Y-%m-%d}",
        short(o.source, 40),
    ]


def _notes(options: tuple[Option, ...]) -> list[str]:
    notes = []
    if any(o.gpu_note for o in options):
        notes.append(
            "* GPU model inferred, not stated by the source: "
            + "; ".join(sorted({o.gpu_note for o in options if o.gpu_note}))
        )
    if any(o.is_variant for o in options):
        notes.append(
            "(V) China variant of the GPU asked for (cut interconnect or compute, or rebuilt with more memory)."
        )
    if any(o.interruptible for o in options):
        notes.append("(spot) interruptible: the provider can reclaim the instance at any time.")
    if any(o.median_unit_price is not None for o in options):
        notes.append(
            "A marketplace price (AutoDL) is the cheapest listing for one GPU; "
            "`--format json` gives the median listing too (median_unit_price)."
        )
    if any(o.availability for o in options):
        notes.append(
            "'stock' is what the provider said at its last refresh; AutoDL's idle GPUs are summed over "
            "machines of up to 8 GPUs, and a multi-GPU job needs its GPUs on one machine."
        )
    if any(o.idle_gpus for o in options):
        notes.append(
            "'gpus x n' is GPUs per instance x instances; whole instances are paid for, idle GPUs included."
        )
    return notes
