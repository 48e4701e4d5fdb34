"""``planner refresh``, ``planner runs`` and ``planner providers``."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import click

from planner import __version__
from planner.commands.emit import emit
from planner.commands.options import format_option, provider_option, verbose_option
from planner.providers import PROVIDERS, canonical_provider
from planner.views.providers import render_providers
from planner.views.refresh import render_summary
from planner.views.runs import render_runs
from vocab import BROKEN_CHECK_STATUSES

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
    from planner.ingest.refresh import run_refresh
    from planner.ingest.refresh_and_alert import refresh_and_alert

    names = [canonical_provider(p) for p in providers]  # a typo is a usage error before anything runs
    if not no_alerts:
        from planner.alerts.rules import load_rules  # its channels bring the mail stack

        load_rules(app.config)  # so is a bad alert rule
    engine = app.engine()
    summary = refresh_and_alert(  # one refresh at a time, the scheduler's too
        engine,
        app.config,
        lambda: run_refresh(
            engine,
            app.config,
            names or None,
            save_raw=save_raw,
            from_raw=from_raw,
            progress=lambda line: click.echo(line, err=True),
            request_log=(lambda line: click.echo(f"http: {line}", err=True)) if verbose else None,
        ),
        holder="planner refresh",
        say=lambda line: click.echo(line, err=True),
        alerts=not no_alerts,
    )
    emit(
        summary,
        fmt,
        table=render_summary,
        csv=lambda s: ([o.to_dict() for o in s.outcomes], OUTCOME_COLUMNS),
    )
    click.get_current_context().exit(summary.exit_code)


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
    from planner.answers.runs import recent
    from planner.ingest.runs import provider_timeout_s

    names = [canonical_provider(p) for p in providers]
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)  # the database stores naive UTC
    found = recent(app.engine(), limit, names, PROVIDERS, provider_timeout_s(app.config), now)
    emit(found, fmt, table=render_runs, csv=lambda f: (f.runs, list(f.runs[0]) if f.runs else ["id"]))


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
    from planner.answers.providers import describe

    if check:
        _check_providers(app, fmt, verbose)
        return
    emit(describe(app.config, app.engine), fmt, table=lambda records: render_providers(records, app.config))


CHECK_COLUMNS = ("provider", "mode", "status", "detail", "todo")


def _check_providers(app, fmt: str, verbose: bool) -> None:  # noqa: ANN001
    """``providers --check``: one line per provider; exit 1 when an enabled one does not work."""
    from planner.answers.providers import check

    log = (lambda line: click.echo(f"http: {line}", err=True)) if verbose else None
    results = check(app.config, __version__, request_log=log)
    emit(
        results,
        fmt,
        table=lambda found: "\n".join(r.line() for r in found),
        csv=lambda found: ([dataclasses.asdict(r) for r in found], CHECK_COLUMNS),
    )
    broken = [r.provider for r in results if r.status in BROKEN_CHECK_STATUSES]
    click.get_current_context().exit(1 if broken else 0)
