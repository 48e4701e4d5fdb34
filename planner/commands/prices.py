"""``planner prices``: the latest price of every instance and billing mode."""

from __future__ import annotations

import click

from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    format_option,
    gpu_filter_option,
    provider_option,
    region_option,
    variants_option,
)
from planner.pricing.cost import OfferQuery
from planner.views.prices import render_prices


@click.command()
@gpu_filter_option
@provider_option
@region_option
@billing_option
@variants_option
@format_option
@click.pass_obj
def prices(app, gpus, providers, regions, billing, include_variants, fmt) -> None:  # noqa: ANN001
    """The latest price of every instance and billing mode, with CNY per GPU-hour.

    \b
    Examples:
      planner prices
      planner prices --gpu A100 --provider aliyun --billing on_demand
      planner prices --gpu 4090 --include-variants --format csv > prices.csv
    """
    from planner.answers.prices import CSV_COLUMNS, latest

    query = OfferQuery.build(gpus, providers, regions, billing, include_variants=include_variants)
    found = latest(reading_engine(app), query)
    emit(found, fmt, table=render_prices, csv=lambda f: ([r.flat() for r in f.rows], CSV_COLUMNS))
