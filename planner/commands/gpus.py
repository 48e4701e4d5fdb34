"""``planner gpus``: the GPU catalog."""

from __future__ import annotations

import click

from planner.commands.options import format_option
from planner.output import csv_text, dumps_json, table

COLUMNS = (
    "name",
    "family",
    "variant_of",
    "memory_gb",
    "memory_type",
    "bandwidth_gbps",
    "dense_tflops",
    "has_bf16",
    "tdp_watts",
    "purchase_price_cny",
    "purchase_price_usd",
    "purchase_price_date",
    "purchase_price_source",
    "china_note",
    "aliases",
    "spec_source",
)


@click.command()
@click.option("--gpu", "query", metavar="GPU", help="Only this family or model, e.g. A100 or RTX4090.")
@click.option("--include-variants", is_flag=True, help="With --gpu, also the China variants.")
@format_option
def gpus(query: str | None, include_variants: bool, fmt: str) -> None:
    """The GPU catalog: canonical names, the aliases providers use, and specs.

    Dense BF16/FP16 TFLOPS (FP16 where a GPU has no BF16), memory, bandwidth, TDP, and a purchase price
    with its date and source where one is known.

    \b
    Examples:
      planner gpus
      planner gpus --gpu A100 --include-variants
      planner gpus --format json
    """
    from planner import catalog

    if query:
        models = [s.model for s in catalog.resolve_query(query, include_variants)]
    else:
        models = catalog.all_models()
    records = []
    for m in models:
        record = {c: getattr(m, c) for c in COLUMNS}
        record["aliases"] = list(m.aliases)
        records.append(record)
    if fmt == "json":
        click.echo(dumps_json(records))
    elif fmt == "csv":
        click.echo(csv_text(records, COLUMNS), nl=False)
    else:
        rows = [
            [
                m.name,
                m.family,
                m.variant_of or "",
                f"{m.memory_gb:g}",
                f"{m.dense_tflops:g}" if m.dense_tflops else "-",
                f"{m.bandwidth_gbps:g}" if m.bandwidth_gbps else "-",
                f"{m.tdp_watts:g}" if m.tdp_watts else "-",
                f"{m.purchase_price_cny:,.0f}" if m.purchase_price_cny else "-",
                m.purchase_price_date or "",
            ]
            for m in models
        ]
        headers = [
            "name",
            "family",
            "variant of",
            "mem GB",
            "TFLOPS",
            "GB/s",
            "TDP W",
            "price CNY",
            "price date",
        ]
        click.echo(table(rows, headers, align_right=(3, 4, 5, 6, 7)))
