"""The one message a check sends to a channel: every alert that fired, with the offers behind it.

Markdown of the subset the robots share (headings, bold, lists); e-mail gets the same text. Each
platform caps a message (its kind's ``max_bytes``), so a long message is cut on a line boundary and
says how many lines it left out.

Text from outside (a provider's or a file's region and instance type, and the reasons built from
them) is data, never markup (provider, GPU model and billing mode are our own checked words): ``literal`` turns every character that WeCom,
DingTalk or Feishu markdown reads as a link, an image, an HTML tag, a mention (Feishu's
``<at id=all></at>``, WeCom's ``<@user>``), an entity, emphasis or a bare URL into its full-width look-alike, so
``[续费](http://x)<at id=all></at>`` arrives as ``［续费］(http：//x)＜at id=all＞＜/at＞`` on every
platform, whatever escapes each renderer honours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vocab import gpu_hour_basis

MAX_OFFERS_PER_ALERT = 10
# What a robot's markdown could read as markup, and the full-width look-alike each becomes.
_MARKUP = str.maketrans(
    {
        "[": "［",
        "]": "］",
        "<": "＜",
        ">": "＞",
        "&": "＆",
        "*": "＊",
        "_": "＿",
        "~": "～",
        "`": "｀",
        "\\": "＼",
        "@": "＠",
        "#": "＃",
        "|": "｜",
        "\n": " ",
        "\r": " ",
    }
)


def literal(text: object) -> str:
    """``text`` from outside as data in a robot's markdown: no link, image, tag, mention, entity,
    emphasis or bare URL survives (see the module's docstring)."""
    return str(text).translate(_MARKUP).replace("://", "：//")


@dataclass(frozen=True)
class Firing:
    """One rule that fired, with each offer that made it fire (as stored in ``alert_state.detail``)."""

    rule: str
    description: str
    offers: tuple[Mapping[str, Any], ...]  # AlertOffer.to_dict() plus "reason" and "fired_at"


def render(firings: Sequence[Firing], max_bytes: int) -> tuple[str, str]:
    """(title, markdown) of the message, at most ``max_bytes`` of UTF-8 (the channel kind's limit)."""
    count = sum(len(f.offers) for f in firings)
    title = f"planner: {len(firings)} GPU alert(s), {count} offer(s)"
    lines = [f"### {title}", ""]
    for firing in firings:
        lines.append(f"**{firing.rule}**: {firing.description}")
        for offer in firing.offers[:MAX_OFFERS_PER_ALERT]:
            lines.append(f"- {offer_line(offer)}")
        hidden = len(firing.offers) - MAX_OFFERS_PER_ALERT
        if hidden > 0:
            lines.append(f"- … and {hidden} more (`planner alerts list`)")
        lines.append("")
    return title, fit("\n".join(lines).rstrip() + "\n", max_bytes)


def offer_line(offer: Mapping[str, Any]) -> str:
    """``autodl west-B RTX4090-24GB: 1.88 CNY/GPU-h (on_demand, per hour), stock 12/80 idle (reason)``:
    the list price per GPU-hour with its basis, as the report and ``gpus --value`` show it."""
    price = float(offer["cny_per_gpu_hour"])
    line = (
        f"{offer['provider']} {literal(offer['region'])} {literal(offer['instance_type'])}: "
        f"{price:.2f} CNY/GPU-h ({gpu_hour_basis(offer['billing'])}), stock {offer.get('stock') or '-'}"
    )
    return line + (f" ({literal(offer['reason'])})" if offer.get("reason") else "")


def fit(text: str, max_bytes: int) -> str:
    """``text`` cut on a line boundary to at most ``max_bytes`` of UTF-8, saying what was left out."""
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line.encode("utf-8")) + 1
        if size > max_bytes - 80:  # room for the closing note
            break
        kept.append(line)
    left_out = len(lines) - len(kept)
    return "\n".join([*kept, f"… {left_out} more line(s): `planner alerts list` shows all"]) + "\n"
