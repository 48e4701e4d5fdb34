"""``planner gpus``: the GPU catalog, and with ``--value`` GPU models ranked by TFLOPS and memory per
CNY (a shell over ``planner.answers.value``; the catalog listing never opens the database)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from planner.billing import HOURLY_MODES
from planner.commands.emit import emit, reading_engine
from planner.commands.flags import typed
from planner.commands.options import (
    billing_option,
    chosen_scope,
    format_option,
    provider_option,
    scope_option,
    single_gpu_option,
)
from planner.errors import UsageError
from planner.output import money, short, table
from planner.pricing.freshness import STALE_DAYS, age_cell, age_legend, prices_line, stale_warning
from planner.views.notes import star_note
from vocab import BillingMode

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.value import ValueRanking, ValueRow
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

    Dense BF16/FP16 TFLOPS (FP16 where a GPU has no BF16), memory, bandwidth, TDP, and a purchase price
    with its date and source where one is known.

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
    from planner import catalog

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
    # planner.answers.value (and the database) only here: the catalog listing stays as quick as it was.
    from planner.answers.value import check_options, value_ranking
    from planner.pricing.query import OfferQuery
    from planner.pricing.query import models as models_of

    # refused before the database opens
    sort, offers = check_options(sort or "tflops", providers, billing, chosen_scope(app, scope))
    models, left_out = models_of(
        OfferQuery.build([query] if query else [], include_variants=True), include_variants
    )
    engine = reading_engine(app)
    with engine.connect() as conn:
        result = value_ranking(
            conn, models, app.config.section("fx"), offers, sort=sort, buy=buy, left_out=left_out
        )
    columns = VALUE_COLUMNS + (BUY_COLUMNS if buy else ())
    emit(result, fmt, table=render_value, csv=lambda v: ([r.to_dict(buy) for r in v.ranked], columns))


def _catalog_listing(models: list[GpuModel], fmt: str) -> None:
    from planner.catalog import interconnect_label

    records = []
    for m in models:
        record = {c: getattr(m, c) for c in COLUMNS if c != "link"}
        record["link"] = interconnect_label(m)  # the label plan shows; "interconnect" is the spec text
        record["aliases"] = list(m.aliases)
        records.append(record)
    emit(records, fmt, table=lambda _: _render_catalog(models), csv=lambda r: (r, COLUMNS))


def _render_catalog(models: list[GpuModel]) -> str:
    from planner.catalog import interconnect_label

    rows = [
        [
            m.name,
            m.family,
            m.variant_of or "",
            f"{m.memory_gb:g}",
            f"{m.dense_tflops:g}" if m.dense_tflops else "-",
            f"{m.bandwidth_gbps:g}" if m.bandwidth_gbps else "-",
            f"{m.tdp_watts:g}" if m.tdp_watts else "-",
            interconnect_label(m),
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
        "link",
        "price CNY",
        "price date",
    ]
    return table(rows, headers, align_right=(3, 4, 5, 6, 8))


VALUE_COLUMNS = (
    "rank",
    "gpu_model",
    "china_variant",
    "dense_tflops",
    "memory_gb",
    "cny_per_gpu_hour",
    "tflops_per_cny_hour",
    "memory_gb_per_cny_hour",
    "provider",
    "region",
    "instance_type",
    "gpus_per_instance",
    "billing",
    "unit_price",
    "unit",
    "currency",
    "observed_at",
    "age_days",
    "from_snapshot",
    "source",
    "gpu_note",
    "sold_out",
    "stock_state",
)
BUY_COLUMNS = (
    "purchase_price_cny",
    "purchase_price_basis",
    "purchase_price_date",
    "purchase_price_source",
    "tflops_per_10k_cny",
    "memory_gb_per_10k_cny",
)


def render_value(result: ValueRanking) -> str:
    modes = " or ".join(result.billing)
    at = f" at {', '.join(result.providers)}" if result.providers else ""
    per = "10,000 CNY of purchase price" if result.buy else "CNY-hour"
    by = "dense TFLOPS" if result.sort == "tflops" else "GB of memory"
    lines = [f"GPU value: ranked by {by} per {per} (rental: cheapest {modes} price per GPU{at})"]
    if not result.ranked:
        lines.append(
            "No GPU model can be ranked (the reasons are below)."
            if result.buy
            else "No GPU model can be ranked. Try without filters, `planner prices`, or `planner refresh`."
        )
    else:
        if result.offers:
            lines.append(prices_line(result.offers))
        headers = [
            "#",
            "GPU",
            "TFLOPS",
            "GB",
            "CNY/GPU-h",
            "where (cheapest)",
            "TFLOPS per CNY-h",
            "GB per CNY-h",
            "age",
        ]
        if result.buy:
            headers += ["purchase CNY (as of)", "TFLOPS per 10k CNY", "GB per 10k CNY"]
        rows = [_value_cells(r, result.buy) for r in result.ranked]
        right = (0, 2, 3, 4, 6, 7, 9, 10, 11) if result.buy else (0, 2, 3, 4, 6, 7)
        lines.append(table(rows, headers, align_right=right))
    lines.extend(_value_notes(result))
    return "\n".join(lines)


def _value_cells(r: ValueRow, buy: bool) -> list[str]:
    o = r.offer
    where = "-"
    if o:
        where = f"{o.provider} {short(o.instance_type, 26)} {o.billing}"
        where += "*" if o.gpu_note else ""
        where += f" ({o.availability.words})" if not o.availability.rentable else ""
    cells = [
        str(r.rank),
        r.gpu_model + ("(V)" if r.china_variant else ""),
        f"{r.dense_tflops:g}" if r.dense_tflops is not None else "-",
        f"{r.memory_gb:g}",
        money(o.cny_per_gpu_hour) if o else "-",
        where,
        money(r.tflops_per_cny_hour),
        money(r.memory_gb_per_cny_hour),
        age_cell(o) if o else "-",
    ]
    if buy:
        p = r.purchase
        price = "-" if p is None else money(p.cny, 0) + ("$" if p.basis == "usd" else "")
        price += f" ({p.date})" if p and p.date else ""  # how old the price is, beside it
        cells += [price, money(r.tflops_per_10k_cny), money(r.memory_gb_per_10k_cny)]
    return cells


def _value_notes(result: ValueRanking) -> list[str]:
    notes = [
        "",
        "TFLOPS: dense BF16 peak (FP16 where the GPU has no BF16), no sparsity, from the catalog.",
    ]
    hourly = all(b in HOURLY_MODES for b in result.billing)
    notes.append(
        "CNY/GPU-h: the cheapest latest list price per GPU over every provider, region and instance "
        "(multi-GPU instances divided by their GPUs; vGPU slices left out"
        + ("" if BillingMode.SPOT in result.billing else "; spot only with --billing spot")
        + ")"
        + ("." if hourly else "; a subscription counts per hour of its period (730 h a month), used 100%.")
    )
    notes.append(
        "Offers that could not be rented at their provider's last refresh (sold out, short of idle GPUs, "
        "not orderable) are passed over; most providers state no stock, "
        "and those offers count as available."
    )
    ranked = result.ranked
    notes += age_legend(result.offers)
    stale = [r for r in ranked if r.offer and stale_warning(r.offer)]
    if stale:
        notes.append(
            f"Warning: rental prices over {STALE_DAYS} days old: "
            + ", ".join(f"{r.gpu_model} ({r.offer.observed_at:%Y-%m-%d})" for r in stale if r.offer)
            + "; they may no longer hold."
        )
    if result.cheaper_outside:
        from planner.pricing.query import scope_words

        where = scope_words(result.scope)
        notes.append(
            f"Cheaper outside {where}: "
            + "; ".join(
                f"{o.gpu_model} {o.provider} {o.region} CNY {money(o.cny_per_gpu_hour)}/GPU-h"
                for o in result.cheaper_outside
            )
            + " (use --scope all)."
        )
    unrentable = sorted(
        {r.offer.availability.words for r in ranked if r.offer and not r.offer.availability.rentable}
    )
    if unrentable:
        notes.append(
            f"({' / '.join(unrentable)}): no offer of that GPU could be rented at its provider's last refresh; "
            "the cheapest is shown."
        )
    if star := star_note(r.offer.gpu_note for r in ranked if r.offer):
        notes.append(star)
    if any(r.offer and r.offer.provider == "autodl" for r in ranked):
        notes.append("AutoDL is a marketplace: its price is the cheapest listing for one GPU.")
    if any(r.china_variant for r in ranked):
        notes.append("(V) China variant (cut interconnect or compute, or rebuilt with more memory).")
    if result.variants_left_out:
        notes.append(
            f"China variants left out: {', '.join(result.variants_left_out)}; --include-variants ranks them."
        )
    if result.buy:
        notes.append(
            "purchase CNY (as of): the catalog's price per card and the day it was seen (its source in "
            "`--format json`; `planner tco` warns when it is over a year old); ranked by it, the rental "
            "figures alongside."
        )
        if any(r.purchase and r.purchase.basis == "usd" for r in ranked):
            notes.append("$ US price at the [fx] USD rate, no China premium: real China prices are higher.")
    if result.not_ranked:
        by_reason: dict[str, list[str]] = {}
        for n in result.not_ranked:
            by_reason.setdefault(n.reason, []).append(n.gpu_model)
        notes.append(
            "Not ranked: "
            + "; ".join(f"{', '.join(names)} ({typed(why)})" for why, names in by_reason.items())
            + "."
        )
    return notes
