"""Notes under a table: why a row's GPU model is marked inferred (the ``*`` note, each reason once), the
line naming a cheaper option outside the region scope, the providers renting a GPU only on application,
and the hints that follow "No prices match" (the same in ``prices``, ``quote`` and ``plan``).

Sources word the same reason per instance family or per size ("GPU inferred from the gn7e family, not
stated by Aliyun", "... the gn7i family ..."); listed as they come, one reason fills a screen. Notes
that differ only in the family (or the assumed size) are folded into one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from planner.pricing.cost import shown_total
from planner.pricing.query import cheaper_outside_line

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.near import NearMatch
    from planner.on_application import OnApplication
    from planner.pricing.cost import JobCost

_FAMILY = re.compile(r"^GPU inferred from the (?P<what>\S+) family, not stated by (?P<who>.+)$")
_SIZE = re.compile(r"^(?P<who>\S+) memory size not stated by the source; assumed (?P<what>[\d.]+) GB$")


def star_note(notes: Iterable[str | None]) -> str | None:
    """ "* GPU model inferred, not stated by the source: REASON; REASON." with every reason once, or
    None when no row is marked."""
    families: dict[str, list[str]] = {}
    sizes: dict[str, list[str]] = {}
    others: list[str] = []
    for note in dict.fromkeys(n.strip() for n in notes if n and n.strip()):
        if found := _FAMILY.match(note):
            families.setdefault(found["who"], []).append(found["what"])
        elif found := _SIZE.match(note):
            sizes.setdefault(found["who"], []).append(found["what"])
        else:
            others.append(note.rstrip("."))
    reasons = [
        f"from the instance family at {who} ({', '.join(sorted(what))})" for who, what in families.items()
    ]
    reasons += [
        f"{who} memory size not stated, assumed {' or '.join(sorted(what, key=float))} GB"
        for who, what in sizes.items()
    ]
    reasons += others
    if not reasons:
        return None
    return "* GPU model inferred, not stated by the source: " + "; ".join(reasons) + "."


def outside_lines(scope: str, cost: JobCost | None) -> list[str]:
    """One line naming ``cost``, a cheaper rental outside ``scope`` (quote and tco), when there is one."""
    if cost is None:
        return []
    amount = f"CNY {shown_total(cost.total_cny):,} in total"
    return [cheaper_outside_line(scope, cost.offer, amount, "use --scope all")]


def on_application_lines(entries: Iterable[OnApplication]) -> list[str]:
    """The providers that rent the GPU only on application, after the priced options: their words, the
    instance family where known, the day seen; no price, so never an option or a recommendation."""
    listed = list(entries)
    if not listed:
        return []
    lines = ["", "Rented only on application (no public price; not an option, never recommended):"]
    for e in listed:
        family = f", family {e.instance_family}" if e.instance_family else ""
        lines.append(f"  {e.provider}: {e.gpu_model}{family}: {e.wording} (seen {e.observed:%Y-%m-%d})")
    lines.append("  (`--format json` gives each source, under on_application.)")
    return lines


def no_match_line(
    said: str, near: NearMatch | None, *, variants_flag: bool = True, otherwise: str = ""
) -> str:
    """``said`` ("No prices match.") and the flags that would reach what is stored near the query
    (``planner.answers.near``), or ``otherwise`` when nothing is: ``Hint: add --include-variants
    (H800-80GB stored); regions look like cn-beijing.`` A command without ``--include-variants``
    (``plan``: ``variants_flag`` False) is pointed at ``--gpu`` instead."""
    tips = []
    if near is not None and near.variants:
        stored = ", ".join(near.variants)
        tips.append(
            f"add --include-variants ({stored} stored)"
            if variants_flag
            else f"China variants are stored: {stored} (add --gpu {near.variants[0]})"
        )
    if near is not None and near.regions:
        tips.append(f"regions look like {', '.join(near.regions)}")
    if tips:
        return f"{said} Hint: {'; '.join(tips)}."
    return f"{said} {otherwise}".rstrip()
