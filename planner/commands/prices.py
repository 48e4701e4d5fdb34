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
from planner.output import money, short, table
from planner.views.notes import star_note


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
    from planner.pricing.cost import OfferQuery

    query = OfferQuery.build(gpus, providers, regions, billing, include_variants=include_variants)
    found = latest(reading_engine(app), query)
    emit(found, fmt, table=render_prices, csv=lambda f: ([r.flat() for r in f.rows], CSV_COLUMNS))


def render_prices(found) -> str:  # noqa: ANN001 - planner.answers.prices.PriceList
    from planner.commands.quote import stock_text

    if not found.rows:
        return no_match_text(found.would_match)
    rows = [
        [
            r.gpu_model + ("*" if r.gpu_note else ""),
            r.provider,
            short(r.region, 16),
            short(r.instance_type, 28),
            f"{r.gpu_count:g}",
            r.billing,
            f"{money(r.price)} {r.currency}/{r.unit}",
            money(r.cny_per_gpu_hour),
            stock_text(r.availability),
            f"{r.observed_at:%Y-%m-%d}",
            "snapshot" if r.from_snapshot else short(r.source, 30),
        ]
        for r in found.rows
    ]
    headers = ["gpu", "provider", "region", "instance", "gpus", "billing", "price", "CNY/GPU-h", "stock"]
    headers += ["observed", "source"]
    lines = [table(rows, headers, align_right=(4, 6, 7))]
    if star := star_note(r.gpu_note for r in found.rows):
        lines.append(star)
    return "\n".join(lines)


def no_match_text(near) -> str:  # noqa: ANN001 - planner.answers.prices.NearMatch
    """ "No prices match these filters." and, when something near is stored, the flag that reaches it."""
    tips = []
    if near.variants:
        tips.append(f"add --include-variants ({', '.join(near.variants)} stored)")
    if near.regions:
        tips.append(f"regions look like {', '.join(near.regions)}")
    return "No prices match these filters." + (f" Hint: {'; '.join(tips)}." if tips else "")
