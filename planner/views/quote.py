"""``planner quote`` for people: one row per option, the recommendation (or why there is none), and the
notes that explain the table's marks. A provider's stock is put into words by ``planner.pricing.words``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.output import money, short, table
from planner.pricing.cost import JobCost, shown_total
from planner.pricing.freshness import OLD_DAYS, age_cell, age_legend, prices_line, stale_warning
from planner.pricing.headline import hours_label
from planner.pricing.recent import HISTORY_DAYS
from planner.pricing.words import (
    MARKET_PRICE_NOTE,
    MARKET_STOCK_NOTE,
    TIE_RULE,
    TIE_SENTENCE,
    TIERS_NOTE,
    stock_state_words,
    stock_words,
)
from planner.views.notes import no_match_line, on_application_lines, outside_lines, star_note
from vocab.words import ENGLISH, say, word

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.quote import Quote


# ``planner quote --help``: the rules it states are read from the constants that make them.
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

BASIS_HELP = f"Cost on each option's latest price (default), or its {HISTORY_DAYS}-day median or min"


def render_quote(result: Quote, lang: str = ENGLISH) -> str:
    """The quote for people; ``lang`` "zh" words its recommendation in Chinese."""
    r, job = result.request, result.job
    models = ", ".join(result.gpu_models) + (
        f" + variants {', '.join(result.variants)}" if result.variants else ""
    )
    lines = [f"Quote: {job.gpus} x {r.gpu} ({models}) for {job.hours:g} h over {job.days} day(s)"]
    if not result.options:
        otherwise = "Try without filters, `planner prices`, or `planner refresh`."
        lines.append(no_match_line("No prices match.", result.near, otherwise=otherwise))
        lines.extend(outside_lines(result.query.scope, result.outside))
        lines.extend(on_application_lines(result.on_application))
        return "\n".join(lines)
    lines.append(prices_line([o.offer for o in result.options]))
    with_history = any(o.history for o in result.options)
    if job.price_basis != "latest":
        if with_history:
            lines.append(
                f"Costed on each option's {job.history_days}-day {job.price_basis} price; '(latest)' marks "
                "options with fewer than 2 prices in that window, costed on their latest price."
            )
        else:
            lines.append(
                f"No option has 2 or more prices in its last {job.history_days} days: costed on the latest "
                "prices (history builds up with each `planner refresh`)."
            )
    with_stock = any(o.offer.stock or o.offer.unlisted_at for o in result.options)
    with_link = any(o.gpus > 1 for o in result.options)
    rows = [
        _row(i, o, with_stock, with_history, with_link, job.price_basis)
        for i, o in enumerate(result.options, 1)
    ]
    headers = [
        "#",
        "provider",
        "region",
        "instance",
        "gpu",
        "gpus x n",
        *(["link"] if with_link else []),
        "billing",
        "unit price",
        "total CNY",
        hours_label(job.hours),
        *(["stock"] if with_stock else []),
        *([f"{job.history_days}d min-med-max", "trend"] if with_history else []),
        "observed",
        "age",
        "source",
    ]
    shift = 1 if with_link else 0
    lines.append(table(rows, headers, align_right=(0, 7 + shift, 8 + shift, 9 + shift)))
    lines.append("")
    verdict = _recommendation_lines(result)
    if lang != ENGLISH:  # the verdict in the team's language; the table and notes stay as they are
        verdict = [verdict_line(result, lang) if v.startswith("Recommendation:") else v for v in verdict]
    lines.extend(verdict)
    lines.extend(outside_lines(result.query.scope, result.outside))
    notes = _notes(result.options)
    if notes:
        lines.append("")
        lines.extend(notes)
    if result.considered > len(result.options):
        lines.append(f"({result.considered - len(result.options)} more option(s); use --top to see them.)")
    lines.extend(on_application_lines(result.on_application))
    return "\n".join(lines)


def _recommendation_lines(result: Quote) -> list[str]:
    best = result.recommendation
    if best is None:
        first = result.options[0]
        return [
            f"Recommendation: none: {result.no_recommendation}. The cheapest, {first.offer.provider} "
            f"{first.offer.instance_type} ({first.offer.region}), is {_state(first)}: CNY "
            f"{shown_total(first.total_cny):,} in total when it can be rented again."
            + stale_warning(first.offer)
        ]
    lines = []
    passed = result.passed_over
    if passed:
        lines.append(
            f"{len(passed)} cheaper option(s) sold out, short of idle GPUs, not orderable or not listed at "
            f"their provider's last refresh (e.g. {passed[0].offer.provider} {passed[0].offer.instance_type}, {_state(passed[0])}); "
            "not recommended."
        )
    o = best.offer
    lines.append(
        f"Recommendation: {o.provider} {o.instance_type} ({o.region}), {best.instances} instance(s) "
        f"on {o.billing}: CNY {shown_total(best.total_cny):,} in total, "
        f"CNY {money(best.cny_per_gpu_hour)} per GPU-hour ({_state(best)})." + stale_warning(o)
    )
    if best.subscription_breakeven_hours_per_month is not None:
        lines.append(
            f"On this instance a monthly subscription beats on-demand above "
            f"{best.subscription_breakeven_hours_per_month} hours per month"
            + (" (with its hourly tiers)." if o.tiers else ".")
        )
    else:
        other = next(
            (x for x in result.options if x.subscription_breakeven_hours_per_month is not None), None
        )
        if other:
            lines.append(
                f"On {other.offer.provider} {other.offer.instance_type}, monthly beats on-demand above "
                f"{other.subscription_breakeven_hours_per_month} hours per month."
            )
    return lines


def verdict_line(result: Quote, lang: str) -> str:
    """The recommendation in one sentence in ``lang`` (``vocab.words``): what to rent, on which billing
    mode, for how much, and whether it can be rented now."""
    best = result.recommendation
    if best is None:
        return say("quote.verdict_none", lang)
    o = best.offer
    return say(
        "quote.verdict",
        lang,
        provider=word("provider", o.provider, lang),
        instance=o.instance_type,
        region=o.region,
        instances=best.instances,
        billing=word("billing", o.billing, lang),
        total=f"{shown_total(best.total_cny):,}",
        price=money(best.cny_per_gpu_hour),
        state=say("quote.available" if best.availability.value == "available" else "quote.unstated", lang),
    )


def _state(o: JobCost) -> str:
    """The option's stock in a sentence, for the GPUs its job pays for (or that its provider no
    longer lists it)."""
    return o.offer.unlisted_words or stock_state_words(o.offer.stock, o.gpus_paid, o.gpus_on_one_machine)


def _stock_cell(o: JobCost) -> str:
    """The stock of ``o`` for the GPUs its job pays for, as ``o.availability`` judges it."""
    return o.offer.unlisted_words or stock_words(o.offer.stock, o.gpus_paid, o.gpus_on_one_machine)


def _unit_price(o: JobCost, fell_back: str) -> str:
    currency = "" if o.offer.currency == "CNY" else f" {o.offer.currency}"
    return f"{money(o.unit_price)}{currency}/{o.offer.unit}{fell_back}" + ("†" if o.tiers_used else "")


def _row(
    index: int, o: JobCost, with_stock: bool, with_history: bool, with_link: bool, basis: str
) -> list[str]:
    offer = o.offer
    marks = (
        ("*" if offer.gpu_note else "")
        + ("(V)" if offer.china_variant else "")
        + ("(spot)" if offer.interruptible else "")
    )
    history = "-"
    if o.history:
        history = f"{money(o.history.min)}-{money(o.history.median)}-{money(o.history.max)}"
    fell_back = " (latest)" if with_history and o.price_basis != basis else ""
    total = shown_total(o.total_cny)
    return [
        str(index),
        offer.provider,
        short(offer.region, 16),
        short(offer.instance_type, 26),
        offer.gpu_model + marks,
        f"{offer.gpus_per_instance:g} x {o.instances}",
        *([o.link[0] or "-"] if with_link else []),
        offer.billing,
        _unit_price(o, fell_back),
        f"{total:,}",  # as many places as shown_total keeps
        money(o.cny_per_gpu_hour),
        *([_stock_cell(o)] if with_stock else []),
        *([history, o.history.trend if o.history else "-"] if with_history else []),
        f"{offer.observed_at:%Y-%m-%d}",
        age_cell(offer),
        short(offer.source, 40),
    ]


def _notes(options: tuple[JobCost, ...]) -> list[str]:
    offers = [o.offer for o in options]
    notes = age_legend(offers)
    if star := star_note(o.gpu_note for o in offers):
        notes.append(star)
    if any(o.china_variant for o in offers):
        notes.append(
            "(V) China variant of the GPU asked for (cut interconnect or compute, or rebuilt with more memory)."
        )
    if any(o.interruptible for o in offers):
        notes.append("(spot) interruptible: the provider can reclaim the instance at any time.")
    tiered = [(i, o) for i, o in enumerate(options, 1) if o.tiers_used]
    if tiered:
        notes.append(
            f"† {TIERS_NOTE}: "
            + "; ".join(f"#{i} {', '.join(str(t) for t in o.tiers_used)}" for i, o in tiered)
            + "."
        )
    foreign = sorted({o.currency for o in offers if o.currency != "CNY"})
    if foreign:
        notes.append(
            f"Unit prices in {', '.join(foreign)} are converted at the [fx] rate of your config for the "
            "CNY totals."
        )
    if any(o.median_unit_price is not None for o in offers):
        notes.append(
            f"{MARKET_PRICE_NOTE}; `--format json` gives the median listing too (median_unit_price)."
        )
    if any(o.stock for o in offers):
        notes.append(MARKET_STOCK_NOTE)
    if any(o.idle_gpus for o in options):
        notes.append(
            "'gpus x n' is GPUs per instance x instances; whole instances are paid for, idle GPUs included."
        )
    if any(o.gpus > 1 for o in options):
        notes.append(
            "'link': how the GPUs talk ('+ network' and 'network only': between instances, over the "
            f"provider's network). {TIE_SENTENCE}"
        )
    return notes
