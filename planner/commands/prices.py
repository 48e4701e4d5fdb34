"""``planner prices``: the latest price of every instance and billing mode."""

from __future__ import annotations

from typing import Any

import click

from planner.commands.options import (
    billing_option,
    format_option,
    gpu_filter_option,
    provider_option,
    region_option,
    variants_option,
)
from planner.output import csv_text, dumps_json, money, short, table

COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "billing",
    "price",
    "currency",
    "unit",
    "cny_per_gpu_hour",
    "observed_at",
    "source",
    "from_snapshot",
    "gpu_note",
    "median_price",
    "stock_status",
    "stock_idle_gpus",
    "stock_total_gpus",
    "stock_observed_at",
)


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
    from db.queries import current_availability, latest_prices
    from planner.commands.quote import stock_text
    from planner.pricing import OfferQuery

    query = OfferQuery.build(gpus, providers, regions, billing, include_variants=include_variants)
    models, provider_names, modes = list(query.gpu_models), list(query.providers), list(query.billing)
    engine, loaded = app.reading_engine()
    if loaded:
        click.echo(f"Database empty: loaded the {loaded.label} ({loaded.rows} prices).", err=True)
    with engine.connect() as conn:
        found = latest_prices(
            conn, models or None, provider_names or None, list(query.regions) or None, modes or None
        )
        stock = current_availability(conn, found)
    records: list[dict[str, Any]] = [
        {
            "provider": p.provider,
            "region": p.region,
            "instance_type": p.instance_type,
            "gpu_model": p.gpu_model,
            "gpu_count": p.gpu_count,
            "billing": p.billing,
            "price": p.price,
            "currency": p.currency,
            "unit": p.unit,
            "cny_per_gpu_hour": p.cny_per_gpu_hour,
            "observed_at": p.observed_at,
            "source": p.source,
            "from_snapshot": p.run_kind == "snapshot",
            "gpu_note": p.gpu_note,
            "median_price": p.median_price,
            "availability": stock.get((p.instance_id, p.billing)),
        }
        for p in sorted(found, key=lambda p: (p.gpu_model, p.cny_per_gpu_hour, p.provider))
    ]
    if fmt == "json":
        click.echo(
            dumps_json(
                [
                    r | {"availability": r["availability"].to_dict() if r["availability"] else None}
                    for r in records
                ]
            )
        )
    elif fmt == "csv":
        flat = []
        for r in records:
            a = r["availability"]
            flat.append(
                r
                | {
                    "stock_status": a.stock_status if a else None,
                    "stock_idle_gpus": a.idle_gpus if a else None,
                    "stock_total_gpus": a.total_gpus if a else None,
                    "stock_observed_at": a.observed_at if a else None,
                }
            )
        click.echo(csv_text(flat, COLUMNS), nl=False)
    else:
        rows = [
            [
                r["gpu_model"] + ("*" if r["gpu_note"] else ""),
                r["provider"],
                short(r["region"], 16),
                short(r["instance_type"], 28),
                f"{r['gpu_count']:g}",
                r["billing"],
                f"{money(r['price'])} {r['currency']}/{r['unit']}",
                money(r["cny_per_gpu_hour"]),
                stock_text(r["availability"]),
                f"{r['observed_at']:%Y-%m-%d}",
                "snapshot" if r["from_snapshot"] else short(r["source"], 30),
            ]
            for r in records
        ]
        headers = [
            "gpu",
            "provider",
            "region",
            "instance",
            "gpus",
            "billing",
            "price",
            "CNY/GPU-h",
            "stock",
            "observed",
            "source",
        ]
        click.echo(table(rows, headers, align_right=(4, 6, 7)) if rows else "No prices match these filters.")
        if any(r["gpu_note"] for r in records):
            click.echo("* GPU model inferred, not stated by the source.")
