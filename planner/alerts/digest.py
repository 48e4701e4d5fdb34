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
from planner.config import Config
from planner.errors import ConfigError
from vocab import PROBLEM_RUN_STATUSES

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

TOP_MODELS = 10
TOP_MOVES = 5
PROBLEMS = PROBLEM_RUN_STATUSES


def digest(report: Any) -> tuple[str, str]:
    """(title, markdown) of the summary of ``report`` (a ``reports.build.Report``)."""
    cheapest = report.tables["cheapest"]
    changes = report.tables["changes"]
    health = report.tables["health"]
    title = f"planner: GPU prices {report.day.isoformat()}"
    lines = [f"### {title}", "", "**Cheapest per GPU-hour** (list price, any billing mode)"]
    # the cheapest models first, as the e-mail lists them; each figure with its basis, and beside a
    # subscription the on-demand headline the report's chart ends on (planner.pricing.headline)
    top = cheapest.sort_values(["cny_per_gpu_hour", "gpu_model"], kind="stable").head(TOP_MODELS)
    for r in top.itertuples():
        hourly = r.on_demand_cny_per_gpu_hour
        beside = "" if r.billing == ON_DEMAND or math.isnan(hourly) else f"; on_demand {hourly:,.2f}"
        lines.append(
            f"- {r.gpu_model}: {r.cny_per_gpu_hour:,.2f} CNY/GPU-h ({r.cny_per_gpu_hour_basis}{beside}), "
            f"{r.provider} {literal(r.instance_type)} ({literal(r.region)})"
        )
    if cheapest.empty:
        lines.append("- no prices: run `planner refresh`")
    lines += [
        f"- {literal(note)}" for note in report.scope_notes
    ]  # the region scope, anything cheaper outside
    lines += ["", "**Changes**"]
    moves = changes.assign(_size=changes["change_pct"].abs()).sort_values("_size", ascending=False)
    for r in moves.head(TOP_MOVES).itertuples():
        lines.append(
            f"- {r.gpu_model} {r.provider} {literal(r.instance_type)} ({literal(r.region)}): "
            f"{r.change_pct:+.1f}% "
            f"({r.old_cny_per_gpu_hour:,.2f} -> {r.new_cny_per_gpu_hour:,.2f})"
        )
    lines.append(f"- {len(changes)} price change(s) in all" if len(changes) else "- no price changed")
    failed = health[health["status"].isin(PROBLEMS)]
    lines += ["", "**Providers**"]
    if failed.empty:
        lines.append("- every provider's last refresh succeeded")
    for r in failed.itertuples():
        lines.append(f"- {r.provider}: {r.status}")
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
    title, text = digest(report)
    deliveries = []
    extra: dict[str, Any] = {"env": env, "post": post}
    if sleep is not None:
        extra["sleep"] = sleep
    for name in names:
        channel = channels[name]
        delivery = deliver(
            channel, title, fit(text, CHANNELS[channel.kind].max_bytes), config=config, **extra
        )
        deliveries.append(delivery)
        with engine.begin() as conn:
            record_run(conn, delivery, what="the report's summary")
    return deliveries
