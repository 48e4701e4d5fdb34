"""``planner schedule``: the scheduled jobs (prices, stock, alerts, report), each on its cadence."""

from __future__ import annotations

import datetime as dt
from functools import partial

import click

from planner.commands.emit import emit
from planner.commands.options import format_option, verbose_option
from planner.config import zone
from planner.errors import UsageError
from planner.ops.cadence import JOBS, cadences
from planner.views.schedule import render_schedule


@click.command()
@click.option("--once", is_flag=True, help="Run the jobs that are due now, then exit with their exit code.")
@click.option(
    "--job",
    "jobs",
    multiple=True,
    type=click.Choice(JOBS),
    help="Run this job now whatever its cadence, then exit; no other job runs (repeatable).",
)
@click.option(
    "--list",
    "show_list",
    is_flag=True,
    help="Print each job's cadence, last run and the next run times (--once runs those due now).",
)
@click.option(
    "--count", type=click.IntRange(1, 100), default=5, show_default=True, help="Run times --list shows."
)
@format_option
@verbose_option
@click.pass_obj
def schedule(app, once, jobs, show_list, count, fmt, verbose) -> None:  # noqa: ANN001
    """Run the scheduled jobs, each on its cadence in [schedule], in the foreground.

    \b
    The jobs, each with its setting in [schedule] and its default:
      prices  refresh every enabled provider          prices = "nightly"
      stock   refresh [schedule] stock_providers      stock = "off"
      alerts  check the [[alerts]] rules              alerts = "after each refresh"
      report  write the report, e-mail it, send its   report = "nightly"
              summary to [schedule] report_channels

    A cadence is "nightly" (every day at [schedule] at, default 02:00), "weekly mon" (any day name,
    at `at`), either with a time of its own ("weekly fri 18:00"), a five-field crontab line ("0 8 * *
    1", read as cron reads it), or "off"; the stock job also takes a duration ("1h"). Times are in
    [schedule] timezone (default Asia/Shanghai). A weekly report is one line: report = "weekly mon".
    The older [schedule] cron, when set, is the cadence of prices and report left at "nightly".

    Jobs due at the same time run one after the other (refreshes first: the report sees tonight's
    prices); never two at once. A refresh holds the refresh lock: one already running elsewhere
    (another scheduler, `planner refresh`) makes the job skip its run and say so. Logs go to standard
    error and to [schedule] log_file (default planner.log in the data directory). SIGTERM or Ctrl-C
    stops it cleanly after a running job.

    --once runs each job that is due: its most recent scheduled time is later than its last
    completed run (recorded in the database; `planner runs` shows them), or it never ran. So a timer
    or cron line that runs `planner schedule --once` nightly or hourly honours every cadence. It says
    which jobs ran and why the others did not. Exit codes of --once and --job: 0 all well (or nothing
    due), 1 a provider or the e-mail failed (see the log), 75 skipped because another refresh holds
    the lock (the job stays due).

    \b
    Examples:
      planner schedule --list
      planner schedule --once              # what is due now (from a timer or cron)
      planner schedule --job report        # write and send the report now
      planner schedule --once -v           # log every HTTP request too
      planner schedule                     # keep running (docs/commands.md: systemd and cron)
    \b
    A weekly report and a nightly refresh, in config.toml:
      [schedule]
      report = "weekly mon"
    """
    from planner.ops.scheduler import stock_providers

    settings = app.config.section("schedule")
    timezone = settings["timezone"]
    zone(timezone)
    found = cadences(app.config)  # every mistake shows now, not at 02:00
    for cadence in found.values():
        cadence.trigger(timezone)
    if found["stock"].timed or "stock" in jobs:
        stock_providers(app.config)
    from planner.alerts.rules import load_rules  # its channels bring the mail stack

    load_rules(app.config)
    if show_list and (once or jobs):
        raise click.UsageError(f"{'--once' if once else '--job'} and --list do not go together")
    if show_list:
        _show_list(app, count, fmt)
        return
    _run(app, found, once, jobs, verbose)


def _run(app, found, once: bool, jobs: tuple[str, ...], verbose: bool) -> None:  # noqa: ANN001
    from planner.ops.scheduler import (
        BoundedJob,
        log,
        log_path,
        logging_to,
        refresh_step,
        run_due,
        run_jobs,
        run_scheduler,
        stock_providers,
        timed_groups,
    )

    settings = app.config.section("schedule")
    path = log_path(app.config)
    with logging_to(path, settings["timezone"]):
        refresh = partial(refresh_step, verbose=True) if verbose else None
        if jobs or once:
            if jobs:
                work = partial(run_jobs, app, jobs, refresh=refresh, found=found)
            else:
                work = partial(run_due, app, refresh=refresh)
            code = BoundedJob(work, settings["job_timeout_s"])()
            click.get_current_context().exit(1 if code is None else code)  # None: abandoned, timed out
        timed = timed_groups(found, settings["timezone"])
        if not timed:
            raise UsageError(
                "[schedule]: every job is off or runs after each refresh: nothing to schedule",
                hint='give one a cadence, e.g. prices = "nightly"',
            )
        grace_s = int(settings["misfire_grace_s"])
        log.info(
            "scheduler started in %s, logging to %s; stop with Ctrl-C or SIGTERM", settings["timezone"], path
        )
        for job, cadence in found.items():
            log.info("%s: %s (%s)", job, cadence.label, cadence.setting)
        if found["stock"].timed:
            log.info("stock refreshes %s", ", ".join(stock_providers(app.config)))

        def due_now() -> int:
            # whatever is due when any job's time comes, within the grace: jobs at the same time run
            # together, refreshes first, and a job another time already ran is not run twice
            return run_due(app, within_s=grace_s, refresh=refresh, say_skips=False)

        (first_id, first_name, first_trigger), *rest = timed
        run_scheduler(
            first_trigger,
            settings["timezone"],
            grace_s,
            due_now,
            job_timeout_s=float(settings["job_timeout_s"]),
            stop_wait_s=float(settings["stop_wait_s"]),
            job_id=first_id,
            name=first_name,
            more=[(job_id, name, trigger, due_now) for job_id, name, trigger in rest],
        )


def _show_list(app, count: int, fmt: str) -> None:  # noqa: ANN001
    from planner.ops.scheduler import clock, last_runs, log_path, schedule_record

    settings = app.config.section("schedule")
    recipients = list(app.config.section("email")["recipients"])
    unread = None
    try:
        last = last_runs(app.engine())
    except Exception as err:  # the cadences and times still show; only the last runs are missing
        last, unread = None, f"{type(err).__name__}: {getattr(err, 'message', err)}"
    doc = schedule_record(app.config, count, clock(zone(settings["timezone"])), last)
    doc["last_runs_unread"] = unread
    doc.update(
        {
            "email": bool(settings["email"]),
            "recipients": recipients if settings["email"] else [],
            "misfire_grace_s": settings["misfire_grace_s"],
            "log_file": str(log_path(app.config)),
            "stock_providers": list(settings.get("stock_providers", [])),
            "report_channels": list(settings.get("report_channels", [])),
            "cron": settings["cron"],
            "stock_every": settings["stock_every"],
        }
    )
    emit(
        doc,
        fmt,
        table=render_schedule,
        csv=lambda d: (
            # a moment, not its text: CSV spells it as spreadsheets read dates, in UTC (vocab.sheet_time)
            [
                {"next_run": dt.datetime.fromisoformat(run["at"]), "jobs": " ".join(run["jobs"])}
                for run in d["runs"]
            ],
            ("next_run", "jobs"),
        ),
    )
