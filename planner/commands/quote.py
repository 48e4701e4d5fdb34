"""``planner quote``: the cost of a whole job on every instance that carries the GPU."""

from __future__ import annotations

import click

from planner.answers.quote import CSV_COLUMNS, QuoteRequest, csv_row
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
from planner.views.quote import BASIS_HELP, HELP, render_quote


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
@price_basis_option(BASIS_HELP)
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
    emit(
        result,
        fmt,
        table=lambda r: render_quote(r, app.language),
        csv=lambda r: ([csv_row(o) for o in r.options], CSV_COLUMNS),
    )
    if not result.options:  # nothing to recommend: not an answer a script may act on (docs/commands.md)
        click.get_current_context().exit(1)
