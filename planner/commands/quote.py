"""``planner quote``: the cost of a whole job on every instance that carries the GPU."""

from __future__ import annotations

import click

from planner.answers.quote import QuoteRequest, option_dict
from planner.answers.quote import quote as run_quote
from planner.commands.arguments import Count
from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    format_option,
    price_basis_option,
    provider_option,
    region_option,
    scope_option,
    single_gpu_option,
    variants_option,
)
from planner.pricing.cost import JobCost
from planner.pricing.freshness import OLD_DAYS
from planner.pricing.offer import STOCK_COLUMNS, stock_columns
from planner.pricing.recent import HISTORY_COLUMNS, HISTORY_DAYS, history_columns
from planner.pricing.words import TIE_RULE
from planner.views.quote import render_quote

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
    *STOCK_COLUMNS,
    "unavailable",
    *HISTORY_COLUMNS,
    "trend",
)

HELP = f"""The cheapest provider, instance and billing mode for a job of N GPUs for H hours.

Every instance carrying the GPU is costed on each billing mode it is sold on (whole instances,
whole subscription periods, Tencent's hourly tiers, which the table notes) and shown once, on its
cheapest mode. Options sold out, short of idle GPUs or not orderable at the provider's last refresh are listed
last and never recommended; {TIE_RULE}.
Spot prices appear only with --billing spot. China variants only with --include-variants.
Mainland China regions only unless --scope all (or [quote] scope); a cheaper option outside is
named in one line. Each option shows its age; "(old)" marks a price over {OLD_DAYS} days old, and a
recommendation on a price over a year old is warned about.
Each option shows its {HISTORY_DAYS}-day min-median-max and trend (up, down or flat); --price-basis median or
min costs the job on those instead of the latest price, where an option has the history.

\b
Examples:
  planner quote --gpu A100 --hours 500
  planner quote --gpu H800 --gpus 8 --hours 300 --days 30
  planner quote --gpu A100-80GB --hours 100 --provider aliyun --format json
  planner quote --gpu RTX4090 --hours 200 --price-basis median
  planner quote --gpu T4 --hours 100 --scope all
"""


@click.command(help=HELP)
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
@price_basis_option(f"Cost on each option's latest price (default), or its {HISTORY_DAYS}-day median or min")
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
    """Parse the flags, run ``planner.answers.quote.quote``, emit it; ``--help`` is ``HELP``."""
    flags = {"gpu": gpu, "hours": hours, "gpus": gpu_count, "days": days, "providers": providers,
             "regions": regions, "billing": billing, "top": top, "price_basis": price_basis,
             "include_variants": include_variants, "scope": scope}  # fmt: skip
    request = QuoteRequest.from_flags(flags, app.config)  # refused here before touching the database
    engine = reading_engine(app)
    with engine.connect() as conn:
        result = run_quote(conn, request, app.config.section("fx"))
    emit(result, fmt, table=render_quote, csv=lambda r: ([_csv_row(o) for o in r.options], CSV_COLUMNS))


def _csv_row(option: JobCost) -> dict[str, object]:
    row = option_dict(option)
    row["tiers"] = "; ".join(str(t) for t in option.tiers_used) or None
    row.update(stock_columns(option.offer.stock))
    row.update(history_columns(option.history))
    return row
