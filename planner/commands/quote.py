"""``planner quote``: the cost of a whole job on every instance that carries the GPU."""

from __future__ import annotations

import click

from planner.answers.quote import Quote, QuoteRequest, option_dict
from planner.commands.arguments import Count
from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    chosen_scope,
    format_option,
    price_basis_option,
    provider_option,
    region_option,
    scope_option,
    single_gpu_option,
    variants_option,
)
from planner.output import money, short, table
from planner.pricing.cost import Availability, JobCost, shown_total
from planner.pricing.freshness import age_cell, age_legend, prices_line, stale_warning
from planner.pricing.recent import check_basis
from planner.views.notes import outside_lines, star_note

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
    "tiers",
    "total_cny",
    "cny_per_gpu_hour",
    "link",
    "nvlink_gbps_bidir",
    "observed_at",
    "age_days",
    "source",
    "from_snapshot",
    "china_variant",
    "gpu_note",
    "interruptible",
    "subscription_breakeven_hours_per_month",
    "median_unit_price",
    "stock_state",
    "stock_status",
    "stock_idle_gpus",
    "stock_total_gpus",
    "stock_orderable_gpus",
    "stock_max_idle_gpus_per_machine",
    "stock_max_orderable_gpus_per_machine",
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
@single_gpu_option("GPU family (A100) or model (A100-80GB).")
@click.option(
    "--hours",
    required=True,
    type=Count("500"),
    metavar="H",
    help="Wall-clock hours the job runs (500, 1K, 1.5e3).",
)
@click.option(
    "--gpus",
    "gpu_count",
    type=Count("8", whole=True),
    default=1,
    show_default=True,
    metavar="N",
    help="GPUs the job needs at once.",
)
@click.option(
    "--days",
    type=Count("30", whole=True),
    metavar="D",
    help="Calendar days the job is spread over (default: the fewest that hold H hours).",
)
@provider_option
@region_option
@billing_option
@click.option(
    "--top",
    type=Count("5", whole=True),
    metavar="K",
    help="Show the K cheapest options (default from [quote] top).",
)
@price_basis_option("Cost on each option's latest price (default), or its 30-day median or min")
@variants_option
@scope_option
@format_option
@click.pass_obj
def quote(
    app,
    gpu,
    hours,
    gpu_count,
    days,
    providers,
    regions,
    billing,
    top,
    price_basis,
    include_variants,
    scope,
    fmt,
) -> None:  # noqa: ANN001, E501
    """The cheapest provider, instance and billing mode for a job of N GPUs for H hours.

    Every instance carrying the GPU is costed on each billing mode it is sold on (whole instances,
    whole subscription periods, Tencent's hourly tiers, which the table notes) and shown once, on its
    cheapest mode. Options sold out, short of idle GPUs or not orderable at the provider's last refresh are listed
    last and never recommended; totals within 0.5% (or 1 CNY) go to fewer machines, then the wider
    NVLink.
    Spot prices appear only with --billing spot. China variants only with --include-variants.
    Mainland China regions only unless --scope all (or [quote] scope); a cheaper option outside is
    named in one line. Each option shows its age; "(old)" marks a price over 90 days old, and a
    recommendation on a price over a year old is warned about.
    Each option shows its 30-day min-median-max and trend (up, down or flat); --price-basis median or
    min costs the job on those instead of the latest price, where an option has the history.

    \b
    Examples:
      planner quote --gpu A100 --hours 500
      planner quote --gpu H800 --gpus 8 --hours 300 --days 30
      planner quote --gpu A100-80GB --hours 100 --provider aliyun --format json
      planner quote --gpu RTX4090 --hours 200 --price-basis median
      planner quote --gpu T4 --hours 100 --scope all
    """
    from planner.answers.quote import quote as run_quote

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
        scope=chosen_scope(app, scope),
        history_days=settings["history_days"],
        price_basis=price_basis
        if price_basis is not None
        else check_basis(settings["price_basis"], "[quote] price_basis in the config"),
    )
    from planner.answers.quote import validate

    validate(request)  # refuse bad arguments before touching the database
    engine = reading_engine(app)
    with engine.connect() as conn:
        result = run_quote(conn, request, app.config.section("fx"))
    emit(result, fmt, table=render_table, csv=lambda r: ([_csv_row(o) for o in r.options], CSV_COLUMNS))


def _csv_row(option: JobCost) -> dict[str, object]:
    row = option_dict(option)
    row["tiers"] = "; ".join(str(t) for t in option.tiers_used) or None
    stock = option.offer.stock
    row["stock_status"] = stock.stock_status if stock else None
    row["stock_idle_gpus"] = stock.idle_gpus if stock else None
    row["stock_total_gpus"] = stock.total_gpus if stock else None
    row["stock_orderable_gpus"] = stock.orderable_gpus if stock else None
    row["stock_max_idle_gpus_per_machine"] = stock.max_idle_gpus_per_machine if stock else None
    row["stock_max_orderable_gpus_per_machine"] = stock.max_orderable_gpus_per_machine if stock else None
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


def stock_text(stock, needed: float = 1, on_one_machine: float = 0) -> str:  # noqa: ANN001 - a stock record, or None
    """A table cell: "idle now 3/32", "sold out", "available" or "-" ("<8 needed" when short,
    "not orderable" when idle GPUs cannot be ordered), judged by ``planner.pricing.cost.availability`` for
    ``needed`` GPUs, ``on_one_machine`` of them on one marketplace machine. Where a marketplace states
    the most idle GPUs on any one machine, the cell says so: "idle 40/480, ≤2 on one machine"."""
    from planner.pricing.cost import Stock, availability

    if stock is None:
        return "-"
    said = Stock.of(stock)
    state = availability(said, needed, on_one_machine)
    idle, most = said.idle_gpus, said.max_idle_gpus_per_machine
    total = f"/{said.total_gpus}" if said.total_gpus is not None else ""
    if state is Availability.SOLD_OUT:
        return f"sold out (0{total} idle)" if idle == 0 else "sold out"
    if state is Availability.NOT_ORDERABLE:
        most_orderable, orderable = said.max_orderable_gpus_per_machine, said.orderable_gpus
        if most_orderable is not None and (orderable is None or orderable >= needed):
            return f"idle {idle}{total}, ≤{most_orderable} orderable on one machine"
        return f"idle {idle}{total}, not orderable"
    if idle is not None:
        wanted = needed if idle < needed else on_one_machine  # short in all, or on any one machine
        short = f" (<{wanted:g} needed)" if state is Availability.SHORT else ""
        if most is not None:
            return f"idle {idle}{total}, ≤{most} on one machine{short}"
        return f"idle now {idle}{total}{short}"
    return "available" if state is Availability.AVAILABLE else "-"


def render_table(result: Quote) -> str:
    r, job = result.request, result.job
    models = ", ".join(result.gpu_models) + (
        f" + variants {', '.join(result.variants)}" if result.variants else ""
    )
    lines = [f"Quote: {job.gpus} x {r.gpu} ({models}) for {job.hours:g} h over {job.days} day(s)"]
    if not result.options:
        lines.append("No prices match. Try without filters, `planner prices`, or `planner refresh`.")
        lines.extend(outside_lines(result.query.scope, result.outside))
        return "\n".join(lines)
    lines.append(prices_line([o.offer for o in result.options]))
    with_history = any(o.history for o in result.options)
    if job.price_basis != "latest":
        if with_history:
            lines.append(
                f"Costed on each option's {job.history_days}-day {job.price_basis} price; '(latest)' marks "
                "options with fewer than 2 prices in that window, costed on their latest price."
            )
        else:
            lines.append(
                f"No option has 2 or more prices in its last {job.history_days} days: costed on the latest "
                "prices (history builds up with each `planner refresh`)."
            )
    with_stock = any(o.offer.stock for o in result.options)
    with_link = any(o.gpus > 1 for o in result.options)
    rows = [
        _row(i, o, with_stock, with_history, with_link, job.price_basis)
        for i, o in enumerate(result.options, 1)
    ]
    headers = [
        "#",
        "provider",
        "region",
        "instance",
        "gpu",
        "gpus x n",
        *(["link"] if with_link else []),
        "billing",
        "unit price",
        "total CNY",
        "CNY/GPU-h",
        *(["stock"] if with_stock else []),
        *([f"{job.history_days}d min-med-max", "trend"] if with_history else []),
        "observed",
        "age",
        "source",
    ]
    shift = 1 if with_link else 0
    lines.append(table(rows, headers, align_right=(0, 7 + shift, 8 + shift, 9 + shift)))
    lines.append("")
    lines.extend(_recommendation_lines(result))
    lines.extend(outside_lines(result.query.scope, result.outside))
    notes = _notes(result.options)
    if notes:
        lines.append("")
        lines.extend(notes)
    if result.considered > len(result.options):
        lines.append(f"({result.considered - len(result.options)} more option(s); use --top to see them.)")
    return "\n".join(lines)


def _recommendation_lines(result: Quote) -> list[str]:
    best = result.recommendation
    if best is None:
        first = result.options[0]
        return [
            f"Recommendation: none: {result.no_recommendation}. The cheapest, {first.offer.provider} "
            f"{first.offer.instance_type} ({first.offer.region}), is {_state(first)}: CNY "
            f"{shown_total(first.total_cny):,} in total when it can be rented again."
            + stale_warning(first.offer)
        ]
    lines = []
    passed = result.passed_over
    if passed:
        lines.append(
            f"{len(passed)} cheaper option(s) sold out, short of idle GPUs or not orderable at their last refresh "
            f"(e.g. {passed[0].offer.provider} {passed[0].offer.instance_type}, {_state(passed[0])}); "
            "not recommended."
        )
    o = best.offer
    lines.append(
        f"Recommendation: {o.provider} {o.instance_type} ({o.region}), {best.instances} instance(s) "
        f"on {o.billing}: CNY {shown_total(best.total_cny):,} in total, "
        f"CNY {money(best.cny_per_gpu_hour)} per GPU-hour ({_state(best)})." + stale_warning(o)
    )
    if best.subscription_breakeven_hours_per_month is not None:
        lines.append(
            f"On this instance a monthly subscription beats on-demand above "
            f"{best.subscription_breakeven_hours_per_month} hours per month"
            + (" (with its hourly tiers)." if o.tiers else ".")
        )
    else:
        other = next(
            (x for x in result.options if x.subscription_breakeven_hours_per_month is not None), None
        )
        if other:
            lines.append(
                f"On {other.offer.provider} {other.offer.instance_type}, monthly beats on-demand above "
                f"{other.subscription_breakeven_hours_per_month} hours per month."
            )
    return lines


def _state(o: JobCost) -> str:
    """The option's stock in words: "available at the last refresh", "sold out (0/32 idle) at the
    last refresh", "stock not stated by the provider"."""
    if o.availability is Availability.UNKNOWN:
        return "stock not stated by the provider"
    return f"{_stock_cell(o)} at the last refresh"


def _stock_cell(o: JobCost) -> str:
    """The stock of ``o`` for the GPUs its job pays for, as ``o.availability`` judges it."""
    return stock_text(o.offer.stock, o.gpus_paid, o.gpus_on_one_machine)


def _unit_price(o: JobCost, fell_back: str) -> str:
    currency = "" if o.offer.currency == "CNY" else f" {o.offer.currency}"
    return f"{money(o.unit_price)}{currency}/{o.offer.unit}{fell_back}" + ("†" if o.tiers_used else "")


def _row(
    index: int, o: JobCost, with_stock: bool, with_history: bool, with_link: bool, basis: str
) -> list[str]:
    offer = o.offer
    marks = (
        ("*" if offer.gpu_note else "")
        + ("(V)" if offer.china_variant else "")
        + ("(spot)" if offer.interruptible else "")
    )
    history = "-"
    if o.history:
        history = f"{money(o.history.min)}-{money(o.history.median)}-{money(o.history.max)}"
    fell_back = " (latest)" if with_history and o.price_basis != basis else ""
    total = shown_total(o.total_cny)
    return [
        str(index),
        offer.provider,
        short(offer.region, 16),
        short(offer.instance_type, 26),
        offer.gpu_model + marks,
        f"{offer.gpus_per_instance:g} x {o.instances}",
        *([o.link[0] or "-"] if with_link else []),
        offer.billing,
        _unit_price(o, fell_back),
        f"{total:,}",  # as many places as shown_total keeps
        money(o.cny_per_gpu_hour),
        *([_stock_cell(o)] if with_stock else []),
        *([history, o.history.trend if o.history else "-"] if with_history else []),
        f"{offer.observed_at:%Y-%m-%d}",
        age_cell(offer),
        short(offer.source, 40),
    ]


def _notes(options: tuple[JobCost, ...]) -> list[str]:
    offers = [o.offer for o in options]
    notes = age_legend(offers)
    if star := star_note(o.gpu_note for o in offers):
        notes.append(star)
    if any(o.china_variant for o in offers):
        notes.append(
            "(V) China variant of the GPU asked for (cut interconnect or compute, or rebuilt with more memory)."
        )
    if any(o.interruptible for o in offers):
        notes.append("(spot) interruptible: the provider can reclaim the instance at any time.")
    tiered = [(i, o) for i, o in enumerate(options, 1) if o.tiers_used]
    if tiered:
        notes.append(
            "† hourly tiers applied (Tencent: the price steps down after 96 and 360 hours): "
            + "; ".join(f"#{i} {', '.join(str(t) for t in o.tiers_used)}" for i, o in tiered)
            + "."
        )
    foreign = sorted({o.currency for o in offers if o.currency != "CNY"})
    if foreign:
        notes.append(
            f"Unit prices in {', '.join(foreign)} are converted at the [fx] rate of your config for the "
            "CNY totals."
        )
    if any(o.median_unit_price is not None for o in offers):
        notes.append(
            "A marketplace price (AutoDL) is the cheapest listing for one GPU; "
            "`--format json` gives the median listing too (median_unit_price)."
        )
    if any(o.stock for o in offers):
        notes.append(
            "'stock' is what the provider said at its last refresh; AutoDL's idle GPUs are summed over "
            "machines of up to 8 GPUs ('≤3 on one machine': the most idle on any one of them), and a "
            "multi-GPU job needs its GPUs idle on one machine. Options that cannot be rented now are "
            "listed last and never recommended."
        )
    if any(o.idle_gpus for o in options):
        notes.append(
            "'gpus x n' is GPUs per instance x instances; whole instances are paid for, idle GPUs included."
        )
    if any(o.gpus > 1 for o in options):
        notes.append(
            "'link': how the GPUs talk ('+ network' and 'network only': between instances, over the "
            "provider's network). Totals within 0.5% (or 1 CNY) go to fewer machines, then the wider NVLink."
        )
    return notes
