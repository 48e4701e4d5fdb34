"""``planner gpus`` for people: the catalog table, and the ``--value`` ranking with the notes that say
what its figures are and what was passed over."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.billing import HOURLY_MODES
from planner.catalog import ESTIMATE_MIDPOINT, interconnect_label
from planner.on_application import providers_for
from planner.output import money, short, table
from planner.pricing.freshness import STALE_DAYS, age_cell, age_legend, prices_line, stale_warning
from planner.pricing.headline import list_label
from planner.pricing.query import scope_words
from planner.pricing.words import MARKETPLACE_NOTE
from planner.providers import MARKETPLACES
from planner.views.notes import star_note
from planner.views.typed import typed
from vocab import BillingMode

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.value import ValueRanking, ValueRow
    from planner.catalog import GpuModel


def render_catalog(models: list[GpuModel]) -> str:
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
            ", ".join(providers_for(m.name)) or "-",
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
        "on application",
    ]
    note = (
        "\n'on application': providers renting the GPU only after a ticket, whitelist or invitation, with "
        "no public price (`planner quote --gpu NAME` gives their words)."
        if any(row[-1] != "-" for row in rows)
        else ""
    )
    return table(rows, headers, align_right=(3, 4, 5, 6, 8)) + note


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
            list_label(result.billing),
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
        price += "≈" if p and p.obtained == ESTIMATE_MIDPOINT else ""
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
        f"{list_label(result.billing)}: the cheapest latest list price per GPU over every provider, region and instance "
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
    if any(r.offer and r.offer.provider in MARKETPLACES for r in ranked):
        notes.append(MARKETPLACE_NOTE)
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
        if any(r.purchase and r.purchase.obtained == ESTIMATE_MIDPOINT for r in ranked):
            notes.append(
                "≈ the middle of an estimate band, not an observed price (how each figure was obtained and "
                "its confidence: `--format json`, purchase_price_obtained and purchase_price_confidence)."
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
