"""``planner prices`` for people: one row per instance and billing mode, or what would have matched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.output import money, short, table
from planner.pricing.words import stock_words
from planner.views.notes import no_match_line, star_note

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.near import NearMatch
    from planner.answers.prices import PriceList


def render_prices(found: PriceList) -> str:
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
            f"not listed since {r.unlisted_at:%Y-%m-%d}" if r.unlisted_at else stock_words(r.availability),
            f"{r.observed_at:%Y-%m-%d}",
            "snapshot" if r.from_snapshot else short(r.source, 30),
        ]
        for r in found.rows
    ]
    headers = [
        "gpu",
        "provider",
        "region",
        "instance",
        "gpus",
        "billing",
        "price",
        "CNY/GPU-h (list)",
        "stock",
    ]
    headers += ["observed", "source"]
    lines = [table(rows, headers, align_right=(4, 6, 7))]
    if star := star_note(r.gpu_note for r in found.rows):
        lines.append(star)
    return "\n".join(lines)


def no_match_text(near: NearMatch) -> str:
    """ "No prices match these filters." and, when something near is stored, the flag that reaches it."""
    return no_match_line("No prices match these filters.", near)
