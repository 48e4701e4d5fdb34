"""The nightly report's summary as a short markdown message for the [schedule] report_channels: the
cheapest offer per GPU model, the day's biggest price moves and the providers whose last refresh did
not succeed, from the tables the report itself built (``reports.build.Report``). The CSV files stay on
e-mail. Every region and instance name (from a provider or a file) is data (``planner.alerts.message.literal``), never markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from planner.alerts.channels import CHANNELS, add_channel_hint, deliver
from planner.alerts.channels.base import Delivery, Post
from planner.alerts.message import fit, literal
from planner.alerts.rules import load_channels
from planner.billing import ON_DEMAND
from planner.config import Config, language
from planner.errors import ConfigError
from vocab import PROBLEM_RUN_STATUSES, gpu_hour_basis
from vocab.words import ENGLISH, named, say

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

TOP_MODELS = 10
TOP_MOVES = 5
PROBLEMS = PROBLEM_RUN_STATUSES


def digest(report: Any, lang: str = ENGLISH) -> tuple[str, str]:
    """(title, markdown) of the summary of ``report`` (a ``reports.build.Report``), in ``lang``."""
    cheapest = report.tables["cheapest"]
    changes = report.tables["changes"]
    health = report.tables["health"]
    title = say("digest.title", lang, day=report.day.isoformat())
    lines = [f"### {title}", "", say("digest.cheapest", lang)]
    # the cheapest table's first models in its order (the GPUs teams rent first), as the e-mail lists
    # them; each figure with its basis, and beside a subscription the on-demand headline the report's
    # chart ends on (planner.pricing.headline)
    for r in cheapest.head(TOP_MODELS).itertuples():
        hourly = r.on_demand_cny_per_gpu_hour
        basis = r.cny_per_gpu_hour_basis if lang == ENGLISH else gpu_hour_basis(r.billing, lang=lang)
        beside = (
            ""
            if r.billing == ON_DEMAND or math.isnan(hourly)
            else say("digest.on_demand_beside", lang, amount=f"{hourly:,.2f}")
        )
        lines.append(
            "- "
            + say(
                "digest.cheapest_line",
                lang,
                gpu=r.gpu_model,
                amount=f"{r.cny_per_gpu_hour:,.2f}",
                basis=basis + beside,
                provider=named("provider", r.provider, lang),
                instance=literal(r.instance_type),
                region=literal(r.region),
            )
        )
    if cheapest.empty:
        lines.append("- " + say("digest.no_prices", lang))
    lines += [
        f"- {literal(note)}" for note in report.scope_notes
    ]  # the region scope, anything cheaper outside
    lines += ["", say("digest.changes", lang)]
    moves = changes.assign(_size=changes["change_pct"].abs()).sort_values("_size", ascending=False)
    for r in moves.head(TOP_MOVES).itertuples():
        lines.append(
            "- "
            + say(
                "digest.move",
                lang,
                gpu=r.gpu_model,
                provider=named("provider", r.provider, lang),
                instance=literal(r.instance_type),
                region=literal(r.region),
                change=f"{r.change_pct:+.1f}",
                old=f"{r.old_cny_per_gpu_hour:,.2f}",
                new=f"{r.new_cny_per_gpu_hour:,.2f}",
            )
        )
    lines.append(
        "- "
        + (
            say("digest.changes_all", lang, count=len(changes))
            if len(changes)
            else say("digest.no_change", lang)
        )
    )
    failed = health[health["status"].isin(PROBLEMS)]
    lines += ["", say("digest.providers", lang)]
    if failed.empty:
        lines.append("- " + say("digest.all_ok", lang))
    for r in failed.itertuples():
        lines.append(
            "- "
            + say(
                "digest.problem",
                lang,
                provider=named("provider", r.provider, lang),
                status=named("status", r.status, lang),
            )
        )
    return title, "\n".join(lines) + "\n"


def send_digest(
    engine: Engine,
    config: Config,
    report: Any,
    *,
    env: Mapping[str, str] | None = None,
    post: Post | None = None,
    sleep: Callable[[float], None] | None = None,
) -> list[Delivery]:
    """Send the summary to every [schedule] report_channels channel; each recorded in ``scrape_runs``.
    Raises ConfigError for a channel that is not configured."""
    from planner.alerts.check import record_run

    names = list(config.section("schedule").get("report_channels", []))
    if not names:
        return []
    channels = load_channels(config)
    for name in names:
        if name not in channels:
            raise ConfigError(
                f"[schedule] report_channels names {name!r}, which is not a [channels.{name}] table",
                hint=add_channel_hint(name),
            )
    lang = language(config)
    title, text = digest(report, lang)
    deliveries = []
    extra: dict[str, Any] = {"env": env, "post": post}
    if sleep is not None:
        extra["sleep"] = sleep
    for name in names:
        channel = channels[name]
        delivery = deliver(
            channel, title, fit(text, CHANNELS[channel.kind].max_bytes, lang), config=config, **extra
        )
        deliveries.append(delivery)
        with engine.begin() as conn:
            record_run(conn, delivery, what="the report's summary")
    return deliveries
