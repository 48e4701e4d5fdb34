"""``planner gpus``: the GPU catalog, and with ``--value`` GPU models ranked by TFLOPS and memory per
CNY (a shell over ``planner.answers.value``; the catalog listing never opens the database)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from planner import catalog
from planner.answers.value import ValueRequest, value_columns
from planner.catalog import interconnect_label
from planner.commands.emit import emit, reading_engine
from planner.commands.options import (
    billing_option,
    format_option,
    provider_option,
    scope_option,
    single_gpu_option,
)
from planner.errors import UsageError
from planner.on_application import providers_for
from planner.views.gpus import render_catalog, render_value

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

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
    "interconnect",
    "link",
    "nvlink_gbps_bidir",
    "purchase_price_cny",
    "purchase_price_usd",
    "purchase_price_date",
    "purchase_price_source",
    "china_note",
    "aliases",
    "spec_source",
    "on_application",
)


@click.command()
@single_gpu_option("Only this family or model, e.g. A100 or RTX4090.", required=False, dest="query")
@click.option(
    "--include-variants",
    is_flag=True,
    help="With --gpu, also the China variants; with --value, rank them too, labelled (V).",
)
@click.option(
    "--value",
    is_flag=True,
    help="Rank by dense TFLOPS and GB of memory per CNY-hour at the cheapest current rental price.",
)
@click.option(
    "--buy", is_flag=True, help="Rank per purchase yuan instead (implies --value); rental figures alongside."
)
@click.option(
    "--sort", metavar="tflops|memory", help="What --value ranks by: tflops (default) or memory (GB)."
)
@provider_option
@billing_option
@scope_option
@format_option
@click.pass_obj
def gpus(app, query, include_variants, value, buy, sort, providers, billing, scope, fmt) -> None:  # noqa: ANN001
    """The GPU catalog: canonical names, the aliases providers use, and specs.

    Dense BF16/FP16 TFLOPS (FP16 where a GPU has no BF16), memory, bandwidth, TDP, a purchase price
    with its date and source where one is known, and the providers that rent it only on application
    (a ticket, a whitelist or an invitation; no public price: `planner quote` lists their words).

    With --value, GPU models ranked by dense TFLOPS and by GB of memory per CNY-hour at their cheapest
    current rental price per GPU (any provider, region and instance; on-demand unless --billing names
    other modes, a subscription counted per hour of its period at full use; spot only with --billing
    spot; vGPU slices never; offers that could not be rented at the last refresh passed over). With --buy, ranked per
    10,000 CNY of the catalog purchase price instead. China variants only with --include-variants.
    Rentals in mainland China regions only unless --scope all (or [quote] scope); a model cheaper
    outside is named below the table. "(old)" marks a rental price over 90 days old.

    \b
    Examples:
      planner gpus
      planner gpus --gpu A100 --include-variants
      planner gpus --format json
      planner gpus --value
      planner gpus --value --sort memory --provider autodl
      planner gpus --value --billing monthly --format json
      planner gpus --value --buy --include-variants
    """
    if buy:
        value = True
    if not value:
        for name, on, example in (
            ("--sort", sort, "--sort memory"),
            ("--provider", providers, "--provider autodl"),
            ("--billing", billing, "--billing monthly"),
            ("--scope", scope, "--scope all"),
        ):
            if on:
                raise UsageError(
                    f"{name} applies only to the --value ranking", f"e.g. planner gpus --value {example}"
                )
        if query:
            _catalog_listing([s.model for s in catalog.resolve_query(query, include_variants)], fmt)
        else:
            _catalog_listing(catalog.all_models(), fmt)
        return
    flags = {"gpu": query, "include_variants": include_variants, "sort": sort, "providers": providers,
             "billing": billing, "scope": scope, "buy": buy}  # fmt: skip
    request = ValueRequest.from_flags(flags, app.config)  # refused before the database opens
    engine = reading_engine(app)
    with engine.connect() as conn:
        result = request.rank(conn, app.config.section("fx"))
    columns = value_columns(buy)
    emit(result, fmt, table=render_value, csv=lambda v: ([r.to_dict(buy) for r in v.ranked], columns))


def _catalog_listing(models: list[GpuModel], fmt: str) -> None:
    records = []
    for m in models:
        record = {c: getattr(m, c) for c in COLUMNS if c not in ("link", "on_application")}
        record["link"] = interconnect_label(m)  # the label plan shows; "interconnect" is the spec text
        record["aliases"] = list(m.aliases)
        record["on_application"] = list(providers_for(m.name))  # rented only after a ticket/whitelist
        records.append(record)
    emit(records, fmt, table=lambda _: render_catalog(models), csv=lambda r: (r, COLUMNS))
