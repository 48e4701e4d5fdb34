"""``planner schedule``: the nightly refresh and report, in the foreground."""

from __future__ import annotations

from functools import partial

import click

from planner.commands.emit import emit
from planner.commands.options import format_option, verbose_option
from planner.views.schedule import render_schedule


@click.command()
@click.option("--once", is_flag=True, help="Run the job now and exit with its exit code.")
@click.option("--list", "show_list", is_flag=True, help="Print the next run times and exit.")
@click.option(
    "--count", type=click.IntRange(1, 100), default=5, show_default=True, help="Run times --list shows."
)
@format_option
@verbose_option
@click.pass_obj
def schedule(app, once, show_list, count, fmt, verbose) -> None:  # noqa: ANN001
    """Refresh the prices and send the report on a schedule, in the foreground.

    The job refreshes every enabled provider, checks the [[alerts]] rules, then writes the report and,
    with [schedule] email = true, e-mails it to [email] recipients (and its summary to [schedule]
    report_channels). With [schedule] stock_every (e.g. "1h"), [schedule] stock_providers are also
    refreshed that often between nights, under the same lock, each time followed by the alerts. It runs on [schedule] cron (default '0 2 * * *', read as
    crontab reads it) in [schedule] timezone (default Asia/Shanghai). One job at a time; runs missed
    while the machine slept are coalesced into one and still run within [schedule] misfire_grace_s.
    A refresh already running elsewhere (another scheduler, `planner refresh`) makes the job skip
    its run and say so. Logs go to standard error and to [schedule] log_file (default planner.log
    in the data directory). SIGTERM or Ctrl-C stops it cleanly after a running job.

    Exit codes of --once: 0 all well, 1 a provider or the e-mail failed (see the log), 75 skipped
    because another refresh holds the lock.

    \b
    Examples:
      planner schedule --list
      planner schedule --once
      planner schedule --once -v    # log every HTTP request too
      planner schedule              # keep running (docs/commands.md: systemd and cron)
    """
    from planner.ops.scheduler import (
        BoundedJob,
        crontab_trigger,
        every_seconds,
        log_path,
        logging_to,
        refresh_step,
        run_job,
        stock_providers,
    )

    settings = app.config.section("schedule")
    trigger = crontab_trigger(settings["cron"], settings["timezone"])
    stock_every_s = every_seconds(settings.get("stock_every", ""))  # mistakes show now, not at 02:00
    if stock_every_s:
        stock_providers(app.config)
    from planner.alerts.rules import load_rules  # its channels bring the mail stack

    load_rules(app.config)
    if once and show_list:
        raise click.UsageError("--once and --list do not go together")
    if show_list:
        _show_list(app, trigger, count, fmt)
        return
    path = log_path(app.config)
    with logging_to(path, settings["timezone"]):
        refresh = partial(refresh_step, verbose=True) if verbose else None
        if once:
            code = BoundedJob(lambda: run_job(app, refresh=refresh), settings["job_timeout_s"])()
            click.get_current_context().exit(1 if code is None else code)  # None: abandoned, timed out
        from planner.ops.scheduler import log, run_scheduler

        log.info(
            "scheduler started: %r in %s, logging to %s; stop with Ctrl-C or SIGTERM",
            settings["cron"],
            settings["timezone"],
            path,
        )
        from planner.ops.scheduler import run_stock_job

        stock = (stock_every_s, lambda: run_stock_job(app)) if stock_every_s else None
        if stock:
            log.info(
                "stock refresh of %s every %s",
                ", ".join(stock_providers(app.config)),
                settings["stock_every"],
            )
        run_scheduler(
            trigger,
            settings["timezone"],
            int(settings["misfire_grace_s"]),
            lambda: run_job(app, refresh=refresh),
            stock=stock,
            job_timeout_s=float(settings["job_timeout_s"]),
            stop_wait_s=float(settings["stop_wait_s"]),
        )


def _show_list(app, trigger, count: int, fmt: str) -> None:  # noqa: ANN001
    from planner.ops.scheduler import log_path, next_runs

    settings = app.config.section("schedule")
    recipients = list(app.config.section("email")["recipients"])
    runs = next_runs(trigger, count)
    doc = {
        "cron": settings["cron"],
        "timezone": settings["timezone"],
        "next_runs": [r.isoformat() for r in runs],
        "email": bool(settings["email"]),
        "recipients": recipients if settings["email"] else [],
        "misfire_grace_s": settings["misfire_grace_s"],
        "log_file": str(log_path(app.config)),
        "stock_every": settings.get("stock_every", ""),
        "stock_providers": list(settings.get("stock_providers", [])),
        "report_channels": list(settings.get("report_channels", [])),
    }
    emit(
        doc,
        fmt,
        table=render_schedule,
        csv=lambda d: ([{"next_run": r} for r in d["next_runs"]], ("next_run",)),
    )
