"""``planner tco``: rent against buy for N GPUs of one model, with every assumption and its source.

A thin shell over ``planner.answers.tco`` (the buying side and the break-even) and ``planner.answers.rental`` (the
cheapest rental of the same GPU-hours, at the 30-day median price where history exists).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from planner.answers.rental import rental_dict
from planner.answers.tco import TcoRequest, rent_or_buy
from planner.commands.arguments import Count, Number
from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    format_option,
    price_basis_option,
    provider_option,
    scope_option,
    single_gpu_option,
)
from planner.pricing.recent import HISTORY_DAYS
from planner.views.notes import outside_lines
from planner.views.tco import render_tco

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.tco import TcoResult
    from planner.pricing.cost import JobCost


@click.command()
@single_gpu_option("GPU model, e.g. RTX4090 or H800.")
@click.option("--hours", type=Count("3000"), metavar="H", help="Hours each GPU is busy over the horizon.")
@click.option(
    "--utilization", type=Number("0.5"), metavar="U", help="Or: the busy share of the horizon, in (0, 1]."
)
@click.option(
    "--gpus",
    type=Count("8", whole=True),
    default=1,
    show_default=True,
    metavar="N",
    help="GPUs bought (or rented at once).",
)
@click.option("--years", type=Number("3"), metavar="Y", help="Horizon in years (default [tco] years: 3).")
@click.option(
    "--electricity", type=Number("0.64"), metavar="CNY/kWh", help="Electricity tariff (default [tco]: 0.64)."
)
@click.option(
    "--pue", type=Number("1.5"), metavar="P", help="Data-centre PUE, at least 1 (default [tco]: 1.5)."
)
@click.option(
    "--resale",
    type=Number("0.3"),
    metavar="FRACTION",
    help="Share of the purchase price recovered at the end, 0-1.",
)
@click.option(
    "--purchase-price", type=Count("12999"), metavar="CNY", help="Price per GPU (default: the catalog's)."
)
@click.option(
    "--rent-price",
    type=Number("1.9"),
    metavar="CNY",
    help="Rental CNY per GPU-hour (default: the cheapest in the database).",
)
@price_basis_option(f"Rental price: its {HISTORY_DAYS}-day median (default), latest or min")
@provider_option
@billing_option
@scope_option
@format_option
@click.pass_obj
def tco(
    app,
    gpu,
    hours,
    utilization,
    gpus,
    years,
    electricity,
    pue,
    resale,
    purchase_price,
    rent_price,
    price_basis,
    providers,
    billing,
    scope,
    fmt,
) -> None:  # noqa: ANN001
    """Rent against buy: the total cost of each, CNY per GPU-hour, break-even and a verdict.

    Buying: purchase price (the catalog's, with its date and source, or --purchase-price; VAT
    included), the host's share, power (TDP × load × PUE × tariff), hosting and maintenance, less the
    resale value at the end. Renting: the cheapest rental of the same GPU-hours found in the price
    database, at the 30-day median price where history exists: in mainland China regions unless
    --scope all (or [quote] scope), and a cheaper rental outside is named in one line. Every
    assumption is printed with its source; change them with the flags or in [tco] of config.toml.

    \b
    Examples:
      planner tco --gpu RTX4090 --hours 3000
      planner tco --gpu H800 --gpus 8 --utilization 0.6 --years 3
      planner tco --gpu A100-80GB --hours 5000 --purchase-price 75000 --resale 0.2 --format json
      planner tco --gpu T4 --hours 2000 --scope all
    """
    flags = {"gpu": gpu, "hours": hours, "utilization": utilization, "gpus": gpus, "years": years,
             "electricity": electricity, "pue": pue, "resale": resale, "purchase_price": purchase_price,
             "rent_price": rent_price, "price_basis": price_basis, "providers": providers,
             "billing": billing, "scope": scope}  # fmt: skip
    request = TcoRequest.from_flags(flags, app.config)  # refused here before the database
    answer = rent_or_buy(request, app.config.section("fx"), lambda: reading_engine(app))
    emit(
        answer,
        fmt,
        table=lambda a: render_tco(
            a.result, a.rental, a.basis, outside_lines(a.scope, a.outside), app.language
        ),
        csv=lambda a: ([_tco_row(a.result, a.rental) | {"scope": a.scope}], TCO_COLUMNS),
    )


TCO_COLUMNS = (
    "gpu", "gpus", "years", "hours", "gpu_hours", "utilization", "buy_total_cny", "rent_total_cny",
    "buy_cny_per_gpu_hour", "rent_cny_per_gpu_hour", "break_even_hours", "break_even_utilization",
    "recommendation", "rent_provider", "rent_region", "rent_instance_type", "rent_billing",
    "rent_price_basis", "rent_observed_at", "rent_from_snapshot", "scope",
)  # fmt: skip


def _tco_row(result: TcoResult, rental: JobCost | None) -> dict[str, Any]:
    row = result.to_dict()
    if rental is not None:
        described = rental_dict(rental)
        for key in (
            "provider",
            "region",
            "instance_type",
            "billing",
            "price_basis",
            "observed_at",
            "from_snapshot",
        ):
            row[f"rent_{key}"] = described[key]
    return row
