"""Whether one offer meets one rule's condition, and why: pure functions of a rule and an offer."""

from __future__ import annotations

from decimal import Decimal

from planner.alerts.offers import SOLD_OUT, AlertOffer
from planner.alerts.rules import Rule, plain
from planner.pricing.cost import Availability, availability
from planner.pricing.words import per_machine_words
from vocab.words import ENGLISH, named, say


def reason(rule: Rule, offer: AlertOffer, lang: str = ENGLISH) -> str | None:
    """A short sentence when ``offer`` meets ``rule``'s condition now, else None; in ``lang``."""
    price = offer.cny_per_gpu_hour
    if rule.condition == "below_cny_per_gpu_hour":
        limit = rule.below_cny_per_gpu_hour
        assert limit is not None
        return say("reason.below", lang, price=f"{price:.2f}", limit=plain(limit)) if price < limit else None
    if rule.condition == "drop_percent":
        # Against the price the provider's run before saw (so two refreshes on one day compare), and
        # against the offer's median over the window before today; the larger drop is named.
        percent = rule.drop_percent
        assert percent is not None
        found = [
            ((ref - price) / ref * Decimal(100), words, ref)
            for ref, words in (
                (offer.previous_cny_per_gpu_hour, say("reason.run_before", lang)),
                (offer.median_cny_per_gpu_hour, say("reason.window_median", lang, days=rule.window_days)),
            )
            if ref is not None and ref > 0
        ]
        if not found:
            return None
        drop, words, ref = max(found, key=lambda f: f[0])
        if drop < percent:
            return None
        return say(
            "reason.drop", lang, price=f"{price:.2f}", drop=f"{drop:.0f}", than=words, ref=f"{ref:.2f}"
        )
    if rule.condition == "idle_gpus_at_least":
        wanted = rule.idle_gpus_at_least
        assert wanted is not None
        # The pricing core's rule on the pool: idle, orderable (AutoDL) and not sold out, counted over
        # the GPU model's machines in the region, not on one machine; the message says how many are.
        stock = offer.stock
        if stock is None or stock.rentable_gpus is None:
            return None
        if availability(stock, wanted) is not Availability.AVAILABLE:
            return None
        idle = say("reason.idle", lang, idle=stock.rentable_gpus, wanted=wanted)
        return idle + per_machine_words(stock, lang)
    if rule.condition == "back_in_stock":
        if offer.previous_stock_status == SOLD_OUT and offer.offer.availability is Availability.AVAILABLE:
            return say("reason.back_in_stock", lang, stock=offer.stock_text(lang))
        return None
    if rule.condition == "new_offers":
        if not offer.is_new:
            return None
        return say(
            "reason.new",
            lang,
            provider=named("provider", offer.provider, lang),
            gpu=offer.gpu_model,
            instance=offer.instance_type,
        )
    raise ValueError(f"unknown condition {rule.condition!r}")
