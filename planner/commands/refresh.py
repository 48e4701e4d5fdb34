"""``planner refresh``, ``planner runs`` and ``planner providers``."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from planner.commands.options import format_option, provider_option, verbose_option
from planner.output import csv_text, dumps_json, short, table

MAX_RUNS_SHOWN = 100_000  # a larger --limit overflows the database's integer (1e20: a traceback before)
OUTCOME_COLUMNS = (
    "provider",
    "status",
    "mode",
    "offers",
    "stored",
    "changed",
    "already_present",
    "skipped",
    "availability",
    "seconds",
    "error",
    "unknown_gpus",
    "flagged",
    "notes",
    "run_id",
)


@click.command()
@provider_option
@click.option(
    "--save-raw",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Also write every raw response to DIR/<provider>/ (secrets removed).",
)
@click.option(
    "--from-raw",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="Replay a folder written by --save-raw instead of the network.",
)
@click.option("--no-alerts", is_flag=True, help="Do not check the [[alerts]] rules after refreshing.")
@format_option
@verbose_option
@click.pass_obj
def refresh(app, providers, save_raw, from_raw, no_alerts, fmt, verbose) -> None:  # noqa: ANN001
    """Pull today's GPU prices from the providers into the database.

    Enabled providers run at the same time, each in its own run and transaction: one that fails,
    hangs or returns garbage stores nothing and keeps its last good prices. Progress goes to standard
    error, the summary to standard output. A second refresh on the same day adds no price (one per
    instance, billing mode and day) but records availability again. Then the [[alerts]] rules are
    checked (`planner alerts`); a failing channel never changes the exit code.

    Exit code: 0 when every provider ended ok, partial (some regions failed, the rest stored) or
    skipped (disabled, or nothing to replay); 1 when any provider failed; 75 when another refresh
    (the scheduler's, say) is running on the same database.

    \b
    Examples:
      planner refresh
      planner refresh --provider tencent --provider aliyun
      planner refresh --save-raw raw/2026-11-30
      planner refresh --from-raw tests/fixtures/raw --format json
      planner refresh -v --provider aliyun    # print every HTTP request to standard error
    """
    from planner.locks import refresh_lock
    from planner.providers import canonical_provider
    from planner.refresh import run_refresh

    names = [canonical_provider(p) for p in providers]  # a typo is a usage error before anything runs
    if not no_alerts:
        from planner.alerts.rules import load_rules

        load_rules(app.config)  # so is a bad alert rule
    engine = app.engine()
    with refresh_lock(engine, holder="planner refresh"):  # one refresh at a time, the scheduler's too
        summary = run_refresh(
            engine,
            app.config,
            names or None,
            save_raw=save_raw,
            from_raw=from_raw,
            progress=lambda line: click.echo(line, err=True),
            request_log=(lambda line: click.echo(f"http: {line}", err=True)) if verbose else None,
        )
        if not no_alerts:
            from planner.alerts.check import after_refresh

            after_refresh(engine, app.config, lambda line: click.echo(line, err=True))
    if fmt == "json":
        click.echo(dumps_json(summary.to_dict()))
    elif fmt == "csv":
        click.echo(csv_text([o.to_dict() for o in summary.outcomes], OUTCOME_COLUMNS), nl=False)
    else:
        click.echo(render_summary(summary))
    click.get_current_context().exit(summary.exit_code)


def render_summary(summary) -> str:  # noqa: ANN001 - planner.refresh.RefreshSummary
    rows = [
        [
            o.provider,
            o.status,
            o.mode or "-",
            str(o.offers),
            str(o.stored),
            str(o.changed),
            f"{o.seconds:.1f}",
            short(o.error, 50) if o.error else "-",
        ]
        for o in summary.outcomes
    ]
    headers = ["provider", "status", "mode", "offers", "new", "changed", "seconds", "error"]
    lines = [table(rows, headers, align_right=(3, 4, 5, 6))]
    for o in summary.outcomes:
        details = [f"error: {o.error}"] if o.error and len(o.error) > 50 else []
        details += o.notes
        if o.already_present:
            details.append(
                f"{o.already_present} price(s) already stored today (one per instance, billing and day)"
            )
        if details:
            lines.append("")
            lines.append(f"{o.provider}:")
            lines.extend(f"  - {d}" for d in details)
    failed = [o.provider for o in summary.outcomes if o.status == "failed"]
    lines.append("")
    if failed:
        lines.append(
            f"Exit code 1: {', '.join(failed)} failed; nothing of theirs was stored and their last good "
            "prices stay in use. `planner runs` shows the history."
        )
    else:
        lines.append("Every provider refreshed or was skipped.")
    if any((o.mode or "") == "public" for o in summary.outcomes):  # a live run, not a replay
        lines.append(
            "Some providers ran without an account: `planner providers` says what to set to see more."
        )
    return "\n".join(lines)


@click.command()
@click.option("--limit", type=click.IntRange(1, MAX_RUNS_SHOWN), default=20, show_default=True, metavar="N")
@provider_option
@format_option
@click.pass_obj
def runs(app, limit, providers, fmt) -> None:  # noqa: ANN001
    """Recent refreshes, imports and snapshot loads, newest first, and each provider's health.

    A refresh run whose process was killed is marked interrupted by the next refresh (and shown so
    once it is older than twice [refresh] provider_timeout_s); it stored nothing.

    \b
    Examples:
      planner runs
      planner runs --provider tencent --limit 5
      planner runs --format json
    """
    from db.queries import provider_health, recent_runs
    from planner.providers import PROVIDERS, canonical_provider

    names = [canonical_provider(p) for p in providers]
    timeout_s = float(app.config.section("refresh").get("provider_timeout_s", 900))
    with app.engine().connect() as conn:
        found = recent_runs(conn, limit, names or None)
        health = provider_health(conn, names or list(PROVIDERS))
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    records: list[dict[str, Any]] = []
    for r in found:
        status = r.status
        if status == "running" and (now - r.started_at).total_seconds() > timeout_s * 2:
            status = "interrupted"
        seconds = (r.finished_at - r.started_at).total_seconds() if r.finished_at else None
        records.append(
            {
                "id": r.id,
                "provider": r.provider,
                "kind": r.kind,
                "mode": r.mode,
                "status": status,
                "started_at": r.started_at,
                "finished_at": r.finished_at,
                "seconds": seconds,
                "offers_seen": r.offers_seen,
                "prices_stored": r.prices_stored,
                "prices_changed": r.prices_changed,
                "offers_skipped": r.offers_skipped,
                "prices_flagged": r.prices_flagged,
                "unknown_gpus": r.unknown_gpus,
                "error": r.error,
                "notes": r.notes,
                "source": r.source,
            }
        )
    if fmt == "json":
        click.echo(dumps_json({"runs": records, "health": [h.__dict__ for h in health.values()]}))
        return
    if fmt == "csv":
        click.echo(csv_text(records, list(records[0]) if records else ["id"]), nl=False)
        return
    if not records:
        click.echo("No runs yet. `planner refresh` pulls today's prices.")
        return
    rows = [
        [
            str(r["id"]),
            f"{r['started_at']:%Y-%m-%d %H:%M}",
            r["provider"],
            r["kind"],
            r["status"],
            str(r["offers_seen"]),
            str(r["prices_stored"]),
            str(r["prices_changed"]),
            str(r["offers_skipped"] or 0),
            str(r["prices_flagged"] or 0),
            "-" if r["seconds"] is None else f"{r['seconds']:.0f}",
            short(r["error"], 60),
        ]
        for r in records
    ]
    headers = ["id", "started (UTC)", "provider", "kind", "status", "offers", "new", "changed"]
    headers += ["skipped", "flagged", "secs", "error"]
    click.echo(table(rows, headers, align_right=(0, 5, 6, 7, 8, 9, 10)))
    for record in records:
        if record["unknown_gpus"]:
            click.echo(f"run {record['id']} ({record['provider']}): unknown GPUs {record['unknown_gpus']}")
    if health:
        click.echo("")
        click.echo("Health (refresh runs):")
        for h in health.values():
            click.echo("  " + _health_line(h))


def _health_line(h) -> str:  # noqa: ANN001 - db.queries.ProviderHealth
    last = f"last refresh {h.last_status} {h.last_started_at:%Y-%m-%d %H:%M} UTC"
    if h.last_status in ("ok", "partial", "skipped", "running"):
        return f"{h.provider}: {last}"
    error = f" ({h.last_error})" if h.last_error else ""
    if h.last_ok_at is None:
        return (
            f"{h.provider}: {last}{error}; never refreshed successfully ({h.failures_since_ok} failed run(s))"
        )
    return (
        f"{h.provider}: {last}{error}; last good {h.last_ok_at:%Y-%m-%d %H:%M} UTC "
        f"({h.failures_since_ok} failed run(s) since; its prices are from then)"
    )


@click.command()
@click.option(
    "--check",
    is_flag=True,
    help="Send one cheap request per enabled provider with the current credentials and say what works.",
)
@format_option
@verbose_option
@click.pass_obj
def providers(app, check, fmt, verbose) -> None:  # noqa: ANN001
    """Each provider: enabled or not, the mode it will use, and exactly what to set to see more.

    Public mode needs no account; an account's credentials (environment variables only, never the
    config file) unlock the official APIs. Credentials are shown as present or missing, never their
    values.

    With --check, each enabled provider gets one cheap request (a signed call listing almost nothing
    in account mode, the first public endpoint otherwise) through its configured base_url, and one
    line says whether it works, was refused, or failed, and what to do. Run it first on a machine with
    a network. Exit code 0 when every enabled provider works, 1 otherwise.

    \b
    Examples:
      planner providers
      planner providers --format json
      planner providers --check
      planner providers --check -v     # also print the request sent to each
    """
    from scrapers.recording import redact_url  # a proxy's password is never shown
    from scrapers.registry import PROVIDERS

    if check:
        _check_providers(app, fmt, verbose)
        return

    records: list[dict[str, Any]] = []
    for name, cls in PROVIDERS.items():
        section = app.config.provider(name)
        mode = cls().mode(os.environ)
        present = [v for v in cls.credential_env if os.environ.get(v)]
        records.append(
            {
                "provider": name,
                "enabled": bool(section.get("enabled", True)),
                "mode": mode.mode,
                "credentials_present": mode.credentials_present,
                "credential_env": list(cls.credential_env),
                "credential_env_set": present,
                "sees": mode.sees,
                "to_see_more": list(mode.unlock_env),
                "credential_help": getattr(cls, "credential_help", ""),
                "base_url": redact_url(section["base_url"]) if section.get("base_url") else None,
                "regions": list(section.get("regions") or []),
                **({"charge_types": list(section["charge_types"])} if "charge_types" in section else {}),
            }
        )
    last = _last_refresh(app, list(PROVIDERS))
    for record in records:
        record["last_refresh"] = last.get(record["provider"])
    if fmt == "json":
        click.echo(dumps_json(records))
        return
    if fmt == "csv":
        click.echo(csv_text(records, list(records[0])), nl=False)
        return
    for r in records:
        state = "enabled" if r["enabled"] else "DISABLED (enabled = false in the config)"
        click.echo(f"{r['provider']}: {state}, {r['mode']} mode")
        click.echo(f"  sees: {r['sees']}")
        creds = ", ".join(
            f"{v} {'set' if v in r['credential_env_set'] else 'not set'}" for v in r["credential_env"]
        )
        click.echo(f"  credentials: {creds}")
        if r["to_see_more"]:
            click.echo(f"  to see more: set {' and '.join(r['to_see_more'])} in the environment")
            if r["credential_help"]:
                click.echo(f"    what to set them to: {r['credential_help']}")
        settings = [f"regions {', '.join(r['regions'])}" if r["regions"] else "default regions"]
        if r["base_url"]:
            settings.append(f"base_url {r['base_url']}")
        if "charge_types" in r:
            settings.append(f"charge types {', '.join(r['charge_types'])}")
        click.echo(f"  config: {'; '.join(settings)}")
        click.echo(f"  last refresh: {r['last_refresh'] or 'never'}")
        click.echo("")
    click.echo(
        "Set credentials in the environment only (never in config.toml); `planner refresh` reads them."
    )
    click.echo(f"Settings from: {app.config.sources()}")  # a ./config.toml found here is named


def _last_refresh(app, names: Sequence[str]) -> dict[str, str]:  # noqa: ANN001
    """'ok 2026-11-30 02:00 UTC' per provider; empty when the database cannot be read (not needed here)."""
    from db.queries import provider_health
    from planner.errors import PlannerError

    try:
        with app.engine().connect() as conn:
            health = provider_health(conn, names)
    except PlannerError:
        return {}
    return {name: f"{h.last_status} {h.last_started_at:%Y-%m-%d %H:%M} UTC" for name, h in health.items()}


CHECK_COLUMNS = ("provider", "mode", "status", "detail", "todo")


def _check_providers(app, fmt: str, verbose: bool) -> None:  # noqa: ANN001
    """``providers --check``: one line per provider; exit 1 when an enabled one does not work."""
    import dataclasses

    from planner import __version__
    from scrapers.check import CheckResult, check_provider
    from scrapers.registry import PROVIDERS, ProviderSettings, make_client, read_credentials

    results: list[CheckResult] = []
    for name, cls in PROVIDERS.items():
        section = app.config.provider(name)
        mode = cls().mode(os.environ)
        if not section.get("enabled", True):
            results.append(CheckResult(name, mode.mode, "skipped", "disabled in the config"))
            continue
        settings = ProviderSettings(
            base_url=section.get("base_url") or None, credentials=read_credentials(cls, os.environ)
        )
        http = app.config.section("http")
        # One request, no retries: a check that waits minutes on a dead host would not be cheap.
        policy = dataclasses.replace(
            cls.http_policy,
            max_retries=0,
            min_interval_s=0,
            connect_timeout_s=float(http.get("connect_timeout_s", cls.http_policy.connect_timeout_s)),
            read_timeout_s=float(http.get("read_timeout_s", cls.http_policy.read_timeout_s)),
        )
        log = (lambda line: click.echo(f"http: {line}", err=True)) if verbose else None
        try:
            client = make_client(cls, settings, version=__version__, policy=policy, request_log=log)
        except Exception as err:  # a bad base_url: say so on this provider's line
            results.append(
                CheckResult(name, mode.mode, "failed", str(err), f"fix [providers.{name}] base_url")
            )
            continue
        results.append(check_provider(name, mode.mode, client, settings, mode.unlock_env))
    if fmt == "json":
        click.echo(dumps_json([dataclasses.asdict(r) for r in results]))
    elif fmt == "csv":
        click.echo(csv_text([dataclasses.asdict(r) for r in results], CHECK_COLUMNS), nl=False)
    else:
        for result in results:
            click.echo(result.line())
    broken = [r.provider for r in results if r.status in ("refused", "failed")]
    click.get_current_context().exit(1 if broken else 0)
