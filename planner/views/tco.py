"""``planner tco`` for people: buy against rent, the buying breakdown, the rental found, the break-even,
the recommendation and every assumption with its source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.answers.rental import describe
from planner.output import money, short, table
from planner.pricing.recent import HISTORY_DAYS
from planner.views.typed import typed
from vocab.words import ENGLISH, say

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.tco import TcoResult
    from planner.pricing.cost import JobCost


def render_tco(
    r: TcoResult,
    rental: JobCost | None,
    basis: str = "median",
    outside: list[str] | None = None,
    lang: str = ENGLISH,
) -> str:
    """Rent against buy for people; ``lang`` "zh" words the recommendation in Chinese."""
    lines = [
        f"Rent or buy {r.gpus} x {r.gpu}: {r.hours:,.0f} busy hours per GPU over {r.years:g} years "
        f"({r.utilization:.0%} utilisation)",
        "",
        table(
            [
                ["total CNY", money(r.buy_total_cny), money(r.rent_total_cny)],
                [
                    f"CNY per GPU-hour for {r.hours:,g} h",
                    money(r.buy_cny_per_gpu_hour),
                    money(r.rent_cny_per_gpu_hour),
                ],
            ],
            # the rental's price basis beside its figure: a 30-day median is not quote's latest price
            ["", "buy", f"rent ({rental.price_basis} price)" if rental else "rent"],
            align_right=(1, 2),
        ),
        "",
    ]
    b = r.buy_breakdown
    lines.append(
        f"Buying:     purchase {money(b['purchase'], 0)} + host {money(b['host'], 0)} + hosting "
        f"{money(b['hosting'], 0)} + power {money(b['power'], 0)} - resale {money(-b['resale'], 0)} "
        f"= {money(r.buy_total_cny, 0)} CNY"
    )
    if rental is not None:
        lines.append(f"Renting:    {rental.gpus} GPU(s) for {rental.hours:,.1f} h on {describe(rental)}")
        if basis != "latest" and rental.price_basis == "latest":
            lines.append(f"            (no {HISTORY_DAYS}-day history for a {basis}: the latest price)")
        if not rental.rentable:
            lines.append("            (sold out at the provider's last refresh, like every other offer)")
        if rental.tiers_used:
            lines.append("            (hourly tiers: " + ", ".join(str(t) for t in rental.tiers_used) + ")")
        if rental.offer.from_snapshot:
            lines.append("            (run `planner refresh` for today's prices)")
        lines += outside or []
    else:
        lines.append(f"Renting:    {money(r.rent_cny_per_gpu_hour)} CNY per GPU-hour (--rent-price)")
    if r.break_even_hours is None:
        lines.append("Break-even: never: renting costs less than the power alone")
    else:
        beyond = (
            ": more than the horizon holds"
            if r.break_even_utilization and r.break_even_utilization > 1
            else ""
        )
        lines.append(
            f"Break-even: {r.break_even_hours:,.0f} busy hours per GPU ({r.break_even_utilization:.0%} "
            f"utilisation{beyond}), renting at {money(r.break_even_rent_cny_per_gpu_hour)} CNY per GPU-hour"
        )
    lines += [f"Note: {typed(n)}" for n in r.notes]
    lines += [
        "",
        f"Recommendation: {r.summary}" if lang == ENGLISH else verdict_line(r, lang),
        "",
        "Assumptions (flags or [tco] in config.toml change them):",
    ]
    rows = [[a.name, a.value, short(a.source, 90)] for a in r.assumptions]
    lines.append(table(rows, ["", "value", "source"]))
    return "\n".join(lines)


def verdict_line(r: TcoResult, lang: str) -> str:
    """Buy or rent, the cost per used GPU-hour of each and the break-even, in ``lang`` (``vocab.words``)."""
    key = "tco.verdict_buy" if r.recommendation == "buy" else "tco.verdict_rent"
    head = say(key, lang, buy=money(r.buy_cny_per_gpu_hour), rent=money(r.rent_cny_per_gpu_hour))
    if r.break_even_hours is None or r.break_even_utilization is None:
        return head + say("tco.never", lang)
    hours = f"{r.break_even_hours:,.0f}"
    if r.break_even_utilization > 1:
        return head + say("tco.beyond", lang, hours=hours, cap=f"{r.capacity_gpu_hours / r.gpus:,.0f}")
    return head + say("tco.break_even", lang, hours=hours, share=f"{r.break_even_utilization:.0%}")
