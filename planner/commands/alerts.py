"""``planner alerts``: check the alert rules now, list them with their state, test a channel."""

from __future__ import annotations

import os

import click

from planner.commands.emit import emit
from planner.commands.options import format_option
from planner.views.alerts import render_check, render_rules

FIRED_COLUMNS = (
    "rule",
    "provider",
    "region",
    "instance_type",
    "billing",
    "cny_per_gpu_hour",
    "stock",
    "reason",
    "channels",
)


@click.group()
def alerts() -> None:
    """Alerts when a GPU gets cheap or comes free, sent to e-mail, WeCom, DingTalk or Feishu.

    Rules are [[alerts]] tables and destinations [channels.NAME] tables in the config (see
    config.toml); webhook URLs and secrets come from PLANNER_WEBHOOK_<NAME> and
    PLANNER_WEBHOOK_<NAME>_SECRET only. Alerts are checked after every refresh too.

    \b
    Examples:
      planner alerts list
      planner alerts check --dry-run
      planner alerts test team
    """


@alerts.command()
@click.option("--dry-run", is_flag=True, help="Show what would fire; record and send nothing.")
@format_option
@click.pass_obj
def check(app, dry_run, fmt) -> None:  # noqa: ANN001
    """Judge every rule on the latest prices and stock now, and send what fired.

    An alert fires once when its condition starts to hold for an offer, and again only after it
    stopped holding. Only refreshed and imported prices are judged, never the bundled snapshot's:
    until a refresh or an import, one line says that nothing can fire. Each channel gets at most one
    message listing every alert that fired; a channel that fails keeps its alerts for the next check.
    Alert state that cannot be read (a damaged row, a dropped table) is rebuilt with a warning.
    Exit code 1 when a channel failed.

    \b
    Examples:
      planner alerts check
      planner alerts check --dry-run --format json
    """
    from planner.alerts.check import check_alerts
    from planner.alerts.rules import load_rules
    from planner.ingest.lock import refresh_lock

    load_rules(app.config)  # a bad rule is a usage error before the database is opened
    engine = app.engine()
    if dry_run:
        result = check_alerts(engine, app.config, dry_run=True)
    else:
        with refresh_lock(engine, holder="planner alerts check"):  # never beside a refresh's own check
            result = check_alerts(engine, app.config)
    for line in result.warnings:  # state that had to be rebuilt: said on standard error, and in JSON
        click.echo(f"Warning: {line}.", err=True)
    emit(result, fmt, table=render_check, csv=lambda r: (r.to_dict()["fired"], FIRED_COLUMNS))
    click.get_current_context().exit(1 if result.failed else 0)


@alerts.command("list")
@format_option
@click.pass_obj
def list_cmd(app, fmt) -> None:  # noqa: ANN001
    """The alert rules, their channels and what the database remembers of each.

    \b
    Examples:
      planner alerts list
      planner alerts list --format json
    """
    from planner.alerts.channels import CHANNELS
    from planner.alerts.check import RuleState, rule_states
    from planner.alerts.rules import load_channels, load_rules

    channels = load_channels(app.config)
    rules = load_rules(app.config, channels)
    states = rule_states(app.engine()) if rules else {}
    records = []
    for rule in rules:
        state = states.get(rule.name, RuleState())
        records.append(
            {
                **rule.to_dict(),
                "holding_offers": state.holding,
                "pending_offers": state.pending,
                "last_fired_at": state.last_fired_at,
            }
        )
    channel_records = [
        {
            "name": c.name,
            "kind": c.kind,
            "url_env": c.url_env if CHANNELS[c.kind].webhook else None,
            "url_set": bool(os.environ.get(c.url_env)) if CHANNELS[c.kind].webhook else None,
            "secret_env": c.secret_env if CHANNELS[c.kind].signed else None,
            "secret_set": bool(os.environ.get(c.secret_env)) if CHANNELS[c.kind].signed else None,
        }
        for c in channels.values()
    ]
    columns = ["name", "gpu", "provider", "region", "billing", "condition", "description", "channels"]
    columns += ["holding_offers", "pending_offers", "last_fired_at"]
    emit(
        {"rules": records, "channels": channel_records},
        fmt,
        table=render_rules,
        csv=lambda doc: (doc["rules"], columns),
    )


@alerts.command()
@click.argument("channel")
@format_option
@click.pass_obj
def test(app, channel, fmt) -> None:  # noqa: ANN001
    """Send a short test message to CHANNEL (a [channels.NAME] of the config).

    Exit code 2 when a setting it needs is missing or malformed (PLANNER_WEBHOOK_<NAME>, [email]):
    nothing was tried; 1 when sending failed. `planner runs` records the attempt either way.

    \b
    Examples:
      planner alerts test team
    """
    from planner.alerts.check import send_test

    delivery = send_test(app.engine(), app.config, channel)
    emit(
        delivery,
        fmt,
        table=lambda d: (
            f"Sent a test message to {d.channel} ({d.kind}) in {d.attempts} attempt(s)." if d.ok else ""
        ),
        csv=lambda d: ([d.to_dict()], list(d.to_dict())),
    )
    if fmt == "table" and not delivery.ok:  # the failure goes to standard error, as every error does
        click.echo(f"Error: {delivery.channel} ({delivery.kind}): {delivery.error}", err=True)
    # No attempt made: a setting or variable to fix (usage, like an unset SMTP password for `report
    # --email`); attempts made and failed: a failure.
    click.get_current_context().exit(0 if delivery.ok else 2 if delivery.attempts == 0 else 1)
