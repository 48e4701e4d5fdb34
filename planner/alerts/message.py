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
from vocab.words import ENGLISH, named, say

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


def render(firings: Sequence[Firing], max_bytes: int, lang: str = ENGLISH) -> tuple[str, str]:
    """(title, markdown) of the message in ``lang``, at most ``max_bytes`` of UTF-8 (the channel kind's
    limit)."""
    count = sum(len(f.offers) for f in firings)
    title = say("alert.title", lang, rules=len(firings), offers=count)
    lines = [f"### {title}", ""]
    for firing in firings:
        description = _said(firing.offers[0], "description", lang) if firing.offers else None
        lines.append(say("alert.rule", lang, rule=firing.rule, description=description or firing.description))
        for offer in firing.offers[:MAX_OFFERS_PER_ALERT]:
            lines.append(f"- {offer_line(offer, lang)}")
        hidden = len(firing.offers) - MAX_OFFERS_PER_ALERT
        if hidden > 0:
            lines.append("- " + say("alert.more", lang, count=hidden))
        lines.append("")
    return title, fit("\n".join(lines).rstrip() + "\n", max_bytes, lang)


def _said(offer: Mapping[str, Any], name: str, lang: str) -> str | None:
    """The offer's ``name`` (reason, description, stock) as the check worded it in ``lang``
    (``planner.alerts.check`` keeps the team's language beside the English), else None."""
    said = offer.get("said")
    if lang == ENGLISH or not isinstance(said, Mapping) or said.get("lang") != lang:
        return None
    value = said.get(name)
    return str(value) if value else None


def offer_line(offer: Mapping[str, Any], lang: str = ENGLISH) -> str:
    """``autodl west-B RTX4090-24GB: 1.88 CNY/GPU-h (on_demand, per hour), stock 12/80 idle (reason)``:
    the list price per GPU-hour with its basis, as the report and ``gpus --value`` show it."""
    line = say(
        "alert.offer",
        lang,
        provider=named("provider", offer["provider"], lang),
        region=literal(offer["region"]),
        instance=literal(offer["instance_type"]),
        price=f"{float(offer['cny_per_gpu_hour']):.2f}",
        basis=gpu_hour_basis(offer["billing"], lang=lang),
        stock=_said(offer, "stock", lang) or offer.get("stock") or "-",
    )
    why = _said(offer, "reason", lang) or offer.get("reason")
    return line + (say("alert.reason", lang, reason=literal(why)) if why else "")


def fit(text: str, max_bytes: int, lang: str = ENGLISH) -> str:
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
    return "\n".join([*kept, say("alert.cut", lang, count=left_out)]) + "\n"
