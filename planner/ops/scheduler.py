"""The scheduled jobs (prices: refresh; stock: refresh some providers; alerts: check the rules;
report: write it, e-mail it, send its summary), each run recorded; ``--once``'s run of those due
(``planner.ops.cadence`` says which); and the scheduler that wakes at their times in a time zone.

The job holds the refresh lock (``planner.ingest.lock``) while it refreshes, so two schedulers, or a
scheduler and a person running ``planner refresh``, never refresh at once: the second one logs who
holds the lock and skips its run. APScheduler (imported only in planner.ops, when scheduling) runs one
job at a time, coalesces missed runs into one and still runs a run missed by less than the grace
period (a machine that was asleep at 02:00).

A run is bounded: every HTTP exchange it makes has one wall-clock deadline (``scrapers.deadline``), and
one still going after ``[schedule] job_timeout_s`` is abandoned (logged): its network exchanges are cut
at once, and it is given ``ABANDON_SETTLE_S`` to end and release the refresh lock, so the next night
starts on time instead of being skipped behind it; the first SIGTERM or SIGINT waits at most
``[schedule] stop_wait_s`` for a running job and then exits. On the night a daylight-saving zone sets
its clocks back, a time of day that happens twice runs once (the first time).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import logging.handlers
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from planner.alerts.digest import send_digest
from planner.answers.report import ReportNotSent, cheapest_for, produce_report, report_day
from planner.config import Config, data_dir, language, zone
from planner.errors import PlannerError
from planner.ingest.lock import EXIT_LOCK_BUSY, LockBusy
from planner.ingest.refresh_and_alert import refresh_and_alert
from planner.ops.cadence import (  # the scheduler's words, kept importable from here
    JOBS,
    Cadence,
    cadences,
    crontab_trigger,  # noqa: F401 - re-exported
    crontab_weekdays,  # noqa: F401 - re-exported
    every_seconds,  # noqa: F401 - re-exported
    finish_record,
    last_runs,
    next_runs,  # noqa: F401 - re-exported
    plan,
    schedule_record,  # noqa: F401 - re-exported
    start_record,
)
from planner.output import format_run
from planner.pricing.query import scope_setting
from planner.providers import PROVIDERS, canonical_provider
from planner.text import printable
from vocab import RunStatus

if TYPE_CHECKING:
    from planner.app import App

log = logging.getLogger("planner.schedule")  # the name in the log file


def log_path(config: Config) -> Path:
    configured = config.section("schedule")["log_file"]
    return Path(configured).expanduser() if configured else data_dir() / "planner.log"


class _LogFile(logging.handlers.RotatingFileHandler):
    """The log file; when it cannot be written (a full disk) one line says so on standard error, once
    until it can be written again, instead of logging's traceback for every line."""

    failing = False  # the last line could not be written
    _written = True

    def emit(self, record: logging.LogRecord) -> None:
        self._written = True
        super().emit(record)  # calls handleError when the write fails
        if self._written:
            self.failing = False

    def close(self) -> None:
        try:
            super().close()
        except OSError:  # the last lines could not be flushed: said already, by handleError
            self.stream = None

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        self._written = False
        if not self.failing:
            self.failing = True
            err = sys.exc_info()[1]
            reason = getattr(err, "strerror", None) or err
            sys.stderr.write(
                f"planner: cannot write the log file {self.baseFilename}: {reason} "
                "(logging to standard error only until it can)\n"
            )


# Libraries that log at INFO from inside the job: their lines are not the schedule's (APScheduler's
# "Added job"/"Running job", matplotlib's font cache, alembic's migration steps). Warnings still show.
QUIET_LOGGERS = ("alembic", "apscheduler", "matplotlib", "PIL", "urllib3")


class ZonedFormatter(logging.Formatter):
    """Time stamps in the schedule's time zone (the one its cron is read in), with the offset."""

    def __init__(self, timezone: str | None):
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.zone = ZoneInfo(timezone) if timezone else None

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        when = dt.datetime.fromtimestamp(record.created, self.zone or dt.UTC)
        if self.zone is None:
            when = when.astimezone()
        return when.strftime("%Y-%m-%d %H:%M:%S%z")

    def format(self, record: logging.LogRecord) -> str:
        """The line without control or invisible characters (a provider's text can carry a CSI)."""
        return "\n".join(printable(line) for line in super().format(record).split("\n"))


@contextlib.contextmanager
def logging_to(path: Path, timezone: str | None = None) -> Iterator[None]:
    """Log the schedule's own INFO lines (and every library's warnings) to ``path`` (rotated at 5 MB,
    5 kept) and to standard error, stamped in ``timezone``, for the duration of the block (so tests
    and repeated calls do not pile up handlers)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        to_file = _LogFile(path, maxBytes=5_000_000, backupCount=5, encoding="utf-8")
    except OSError as err:
        raise PlannerError(
            f"cannot write the log file {str(path)!r}: {err.strerror}", hint="set [schedule] log_file"
        ) from None
    to_console = logging.StreamHandler(sys.stderr)
    formatter = ZonedFormatter(timezone)
    root = logging.getLogger()
    old_level = root.level
    quiet = [logging.getLogger(name) for name in QUIET_LOGGERS]
    old_quiet = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.WARNING)
    for handler in (to_file, to_console):
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield
    finally:
        for handler in (to_file, to_console):
            root.removeHandler(handler)
            handler.close()
        root.setLevel(old_level)
        for logger, level in zip(quiet, old_quiet, strict=True):
            logger.setLevel(level)


def refresh_step(app: App, verbose: bool = False, from_raw: Path | None = None) -> Any:
    """Refresh every enabled provider; returns the pipeline's RefreshSummary. ``verbose`` logs each
    HTTP request (method, URL, status, bytes, time; secrets removed); ``from_raw`` replays a folder
    saved by a refresh instead of asking the providers (the tests run the job on a recording)."""
    from planner.ingest.refresh import run_refresh

    return run_refresh(
        app.engine(),
        app.config,
        from_raw=from_raw,
        progress=lambda line: log.info("refresh: %s", line),
        request_log=(lambda line: log.info("http: %s", line)) if verbose else None,
    )


def report_step(app: App) -> int:
    """Write the report and, with [schedule] email = true, send it to [email] recipients."""
    wanted = app.config.section("schedule")["email"]
    recipients = list(app.config.section("email")["recipients"]) if wanted else []
    if wanted and not recipients:
        log.warning("[schedule] email is true but [email] recipients is empty: writing the report only")
    try:
        outcome = produce_report(
            app,
            recipients=recipients,
            on_retry=lambda n, err, wait_s: log.warning(
                "e-mail attempt %d failed: %s; retrying in %g s", n, err.message, wait_s
            ),
            on_warning=lambda line: log.warning("report: %s", line),
            on_created=lambda line: log.info("report: %s", line),
        )
    except ReportNotSent as err:
        log.error("report written to %s but not sent: %s (%s)", err.out_dir, err.message, err.hint)
        return err.exit_code
    except PlannerError as err:
        log.error("report failed: %s%s", err.message, f" ({err.hint})" if err.hint else "")
        return err.exit_code
    log.info("report: wrote %d CSV file(s) to %s", len(outcome.files), outcome.out_dir)
    if outcome.page is not None:
        log.info("report: wrote the web page %s", outcome.page.name)
    if outcome.chart is not None and outcome.chart.path:
        log.info("report: drew %s", outcome.chart.path.name)
    if outcome.recipients:
        log.info("report: sent to %s", ", ".join(outcome.recipients))
    for address, (code, reply) in outcome.refused.items():
        log.error("report: %s refused by the server: %s %s", address, code, reply)
    return 1 if outcome.refused else 0


def prices_step(
    app: App,
    refresh: Callable[[Any], Any] | None = None,
    holder: str = "planner schedule",
    alerts: bool = True,
) -> int:
    """The prices job: refresh every enabled provider under the lock, then (with ``alerts``) check the
    alerts. 0 all well, 1 a provider failed (see the log), 75 skipped because another refresh holds the
    lock. ``refresh`` defaults to refresh_step (looked up when called)."""
    refresh = refresh or refresh_step
    try:
        summary = refresh_and_alert(
            app.engine(),
            app.config,
            lambda: refresh(app),
            holder=holder,
            say=log.info,
            warn=log.warning,
            alerts=alerts,
        )
    except LockBusy as err:
        if re.search(rf"\bpid {os.getpid()}\b", err.holder) and err.holder.startswith(holder):
            log.warning(
                "an earlier run of this scheduler, abandoned and still ending, holds the refresh lock (%s): "
                "skipping this run (lock: %s)",
                err.holder,
                err.where,
            )
        else:
            log.warning(
                "another refresh is running (%s): skipping this run (lock: %s)", err.holder, err.where
            )
        return err.exit_code
    except PlannerError as err:
        log.error("refresh failed: %s%s", err.message, f" ({err.hint})" if err.hint else "")
        return err.exit_code
    except Exception:
        log.exception("refresh crashed")
        return 1
    parts = [
        f"{o.provider} {o.status} ({o.offers} offers, {o.stored} stored, {o.changed} changed)"
        for o in summary.outcomes
    ]
    log.info("refresh finished: %s", "; ".join(parts) or "no provider")
    for o in summary.outcomes:
        if o.status == RunStatus.FAILED:
            log.error("refresh %s failed: %s", o.provider, o.error or "no error recorded")
    return int(summary.exit_code)


def report_job(app: App, report: Callable[[Any], int] | None = None) -> int:
    """The report job: write the report (and e-mail it: ``report``, default report_step), then send its
    summary to [schedule] report_channels. 0 all well, else 1 or the report's exit code."""
    report = report or report_step
    try:
        code = report(app)
    except Exception:
        log.exception("report crashed")
        code = 1
    summary_step(app)
    return code


def alerts_job(app: App, holder: str = "planner schedule (alerts)") -> int:
    """The alerts job (an alerts cadence of its own): check the [[alerts]] rules under the refresh lock,
    as `planner alerts check` does. 0 all well, 1 a channel failed, 75 another refresh holds the lock."""
    from planner.alerts.check import after_refresh
    from planner.ingest.lock import refresh_lock

    if not app.config.data.get("alerts"):
        log.info("alerts: no [[alerts]] rules to check")
        return 0
    try:
        with refresh_lock(app.engine(), holder=holder):
            result = after_refresh(app.engine(), app.config, log.info, log.warning)
    except LockBusy as err:
        log.warning("another refresh is running (%s): skipping this alerts check", err.holder)
        return err.exit_code
    except PlannerError as err:
        log.error("alerts not checked: %s", err.message)
        return err.exit_code
    if result is None:
        return 1  # said why
    return 1 if any(not d.ok for d in result.deliveries) else 0


def run_jobs(
    app: App,
    jobs: Collection[str],
    refresh: Callable[[Any], Any] | None = None,
    report: Callable[[Any], int] | None = None,
    holder: str = "planner schedule",
    found: dict[str, Cadence] | None = None,
) -> int:
    """Run ``jobs`` now, in ``JOBS`` order (the refreshes first, so alerts and the report see their
    prices), each recorded in ``scrape_runs`` (provider ``schedule``, kind the job) so that the next
    ``--once`` knows it ran. The exit code: 0 all well, 1 something failed (see the log), 75 a refresh
    was skipped because another holds the lock (then the jobs after it are not run: they stay due).

    ``refresh`` and ``report`` stand in for refresh_step and report_step (the tests); ``found`` are
    the cadences (default: read from the settings): with alerts after each refresh, each refresh of
    the prices and stock jobs checks them."""
    found = found or cadences(app.config)
    after_refresh = found["alerts"].after_refresh
    order = [job for job in JOBS if job in jobs]
    steps: dict[str, Callable[[], int]] = {
        "prices": lambda: prices_step(app, refresh, holder, alerts=after_refresh),
        "stock": lambda: run_stock_job(app, alerts=after_refresh),
        "alerts": lambda: alerts_job(app),
        "report": lambda: report_job(app, report),
    }
    log.info("job: %s", ", then ".join(order) or "nothing")
    code = 0
    for job in order:
        run_id = _record_start(app, job)
        done: int | None = None
        try:
            done = steps[job]()
        finally:
            _record_finish(app, run_id, 1 if done is None else done)  # None: it raised
        if done == EXIT_LOCK_BUSY:  # the lock's holder refreshes now: what follows waits for the next run
            later = order[order.index(job) :]
            log.info("job finished with exit code %d (not run: %s)", done, ", ".join(later))
            return done
        code = max(code, done)
    log.info("job finished with exit code %d", code)
    return code


def _record_start(app: App, job: str) -> int | None:
    try:
        return start_record(app.engine(), job, source="planner schedule")
    except Exception as err:  # the record is for the next --once: it must not cost this run
        log.error("%s: cannot record this run (%s): the next --once may run it again", job, err)
        return None


def _record_finish(app: App, run_id: int | None, code: int | None) -> None:
    if run_id is None:
        return
    try:
        finish_record(app.engine(), run_id, code)
    except Exception as err:
        log.error("cannot record the end of run %d (%s): the next --once may run it again", run_id, err)


def run_job(
    app: App,
    refresh: Callable[[Any], Any] | None = None,
    report: Callable[[Any], int] | None = None,
    holder: str = "planner schedule",
) -> int:
    """The prices job, then the report job (run_jobs): refresh under the lock, alerts, report. The exit
    code: 0 all well, 1 something failed (see the log), 75 skipped because another refresh holds the
    lock."""
    return run_jobs(app, ("prices", "report"), refresh=refresh, report=report, holder=holder)


def clock(timezone: Any) -> dt.datetime:
    """Now, in ``timezone`` (the tests set the time here)."""
    return dt.datetime.now(timezone)


def timed_groups(found: Mapping[str, Cadence], timezone: str) -> list[tuple[str, str, Any]]:
    """(id, name, trigger) for each distinct timed cadence of ``found``: jobs on the same one share one
    trigger (``prices-report``: nightly, both). The long-running scheduler wakes on each."""
    groups: dict[tuple[str | None, int | None], list[str]] = {}
    for job, cadence in found.items():
        if cadence.timed:
            groups.setdefault((cadence.cron, cadence.every_s), []).append(job)
    return [("-".join(jobs), ", ".join(jobs), found[jobs[0]].trigger(timezone)) for jobs in groups.values()]


def run_due(
    app: App,
    now: dt.datetime | None = None,
    within_s: float | None = None,
    refresh: Callable[[Any], Any] | None = None,
    report: Callable[[Any], int] | None = None,
    say_skips: bool = True,
) -> int:
    """Run every job that is due at ``now`` (default: the clock) and log, for each job, whether it runs
    and why (``report: not due until Mon 2026-12-07 02:00 CST``; with ``say_skips`` false only the jobs
    that run). ``within_s``: only jobs whose scheduled time is at most that old (the long-running
    scheduler's grace; ``--once`` catches up on whatever was missed). 0 when nothing was due.
    ``refresh`` and ``report`` stand in for refresh_step and report_step (the tests)."""
    found = cadences(app.config)
    timezone = zone(app.config.section("schedule")["timezone"])
    now = now or clock(timezone)
    last = last_runs(app.engine())
    verdicts = plan(app.config, last, now, within_s, found)
    for verdict in verdicts:
        if verdict.due or say_skips:
            log.info("%s: %s", verdict.job, verdict.why)
    due = [v.job for v in verdicts if v.due]
    if not due:
        if say_skips:
            log.info("nothing due")
        return 0
    return run_jobs(app, due, refresh=refresh, report=report, found=found)


# How long an abandoned run, its network exchanges cut, is given to end and release the refresh lock
# before the scheduler's worker moves on without it.
ABANDON_SETTLE_S = 60.0


class BoundedJob:
    """The job run in a thread of its own, waited for at most ``timeout_s``: a run still going then is
    abandoned (logged), its HTTP exchanges cut so it ends and releases the refresh lock (waited for up
    to ``settle_s``: ``ABANDON_SETTLE_S``, or ``timeout_s`` if shorter), and the scheduler's one worker is free: the next run starts on time instead of
    being skipped behind a hung one. ``stop()`` abandons a running job at once (the scheduler is
    exiting)."""

    def __init__(
        self,
        job: Callable[[], Any],
        timeout_s: float,
        poll_s: float = 0.2,
        settle_s: float | None = None,
    ):
        self.job, self.timeout_s, self.poll_s = job, timeout_s, poll_s
        # never longer than a run may take: a hang that no cut ends must not hold the next run back long
        self.settle_s = min(ABANDON_SETTLE_S, timeout_s) if settle_s is None else settle_s
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()

    def __call__(self) -> Any:
        done, result = threading.Event(), []

        from scrapers.deadline import Job

        run = Job()  # its HTTP exchanges can be cut together when it is abandoned

        def work() -> None:
            try:
                result.append(run.run(self.job))
            except Exception:
                log.exception("job crashed")
            finally:
                done.set()

        self._idle.clear()
        try:
            threading.Thread(target=work, name="planner-job", daemon=True).start()
            ends = time.monotonic() + self.timeout_s
            while not done.wait(self.poll_s):
                if self._stop.is_set():
                    log.error("job abandoned: the scheduler is stopping")
                    run.abandon()
                    return None
                if time.monotonic() >= ends:
                    log.error(
                        "job still running after %g s ([schedule] job_timeout_s): abandoned, so the next "
                        "run starts on time",
                        self.timeout_s,
                    )
                    self._settle(run, done)
                    return None
            return result[0] if result else None
        finally:
            self._idle.set()

    def _settle(self, run: Any, done: threading.Event) -> None:
        cut = run.abandon()
        if done.wait(self.settle_s):
            log.info(
                "the abandoned run ended (%d network exchange(s) cut) and let go of the refresh lock", cut
            )
        else:
            log.error(
                "the abandoned run is still going after %g s more: it keeps the refresh lock until it ends",
                self.settle_s,
            )

    def wait_idle(self, timeout_s: float) -> bool:
        """True once no run is going (at once when none is), False if one still is after ``timeout_s``."""
        return self._idle.wait(timeout_s)

    def stop(self) -> None:
        self._stop.set()


def make_scheduler(
    trigger: Any,
    timezone: str,
    grace_s: int,
    job: Callable[[], Any],
    job_timeout_s: float = 7200.0,
    job_id: str = "refresh-and-report",
    name: str = "refresh and report",
    more: Sequence[tuple[str, str, Any, Callable[[], Any]]] = (),
):  # noqa: ANN201
    """A scheduler running ``job`` on ``trigger`` in a thread of its own: one at a time, missed runs
    coalesced into one, a run missed by less than ``grace_s`` still run, a run going for longer than
    ``job_timeout_s`` abandoned; and each of ``more``, (id, name, trigger, job), alike, on the same one
    worker. Returns (scheduler, APScheduler job of ``job``); the BoundedJob is its ``func``."""
    from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.schedulers.background import BackgroundScheduler

    scheduler = BackgroundScheduler(
        timezone=trigger.timezone,
        executors={"default": ThreadPoolExecutor(max_workers=1)},
    )
    scheduled = add_timed_job(scheduler, job_id, name, trigger, BoundedJob(job, job_timeout_s), grace_s)
    timed = [scheduled]
    for more_id, more_name, more_trigger, more_job in more:
        bounded = BoundedJob(more_job, job_timeout_s)
        timed.append(add_timed_job(scheduler, more_id, more_name, more_trigger, bounded, grace_s))

    def after(_event: Any) -> None:
        # the jobs' own next_run_time, not scheduler.get_jobs(): a listener runs in the worker, and the
        # scheduler's lock may be held by a shutdown waiting for that worker
        if scheduled.next_run_time:
            log.info("next run: %s", next_run_text(timed, timezone))

    scheduler.add_listener(after, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED)
    return scheduler, scheduled


def add_timed_job(
    scheduler: Any, job_id: str, name: str, trigger: Any, job: Callable[[], Any], grace_s: int
) -> Any:
    """Add ``job`` on ``trigger``: one at a time (the scheduler's one worker), missed runs coalesced,
    a run missed by less than ``grace_s`` still run."""
    return scheduler.add_job(
        job, trigger, id=job_id, name=name, coalesce=True, max_instances=1, misfire_grace_time=grace_s
    )


def next_run_text(jobs: Sequence[Any], timezone: str) -> str:
    """The next run of APScheduler ``jobs`` and what runs then: ``2026-12-03 02:00 Asia/Shanghai
    (UTC+08:00)``, followed by the names of the jobs firing then when there are several."""
    times = [(j.next_run_time, j.name) for j in jobs if j.next_run_time]
    if not times:
        return "never"
    first = min(when for when, _ in times)
    names = [name for when, name in times if when == first]
    return format_run(first, timezone) + (f" ({', '.join(names)})" if len(times) > 1 else "")


def run_scheduler(
    trigger: Any,
    timezone: str,
    grace_s: int,
    job: Callable[[], Any],
    poll_s: float = 0.5,
    stock: tuple[float, Callable[[], Any]] | None = None,
    *,
    job_timeout_s: float = 7200.0,
    stop_wait_s: float = 60.0,
    job_id: str = "refresh-and-report",
    name: str = "refresh and report",
    more: Sequence[tuple[str, str, Any, Callable[[], Any]]] = (),
) -> None:
    """Run ``job`` on ``trigger`` in the foreground until SIGTERM or SIGINT (and ``stock``, (seconds,
    job), every so many seconds: ``add_stock_job``; and each of ``more``, (id, name, trigger, job),
    on its trigger: all share the one worker).

    The first signal stops scheduling and gives a running job ``stop_wait_s`` to finish, then exits
    (a refresh cut short stores nothing half-way); a second one exits at once.
    The main thread only waits for signals while the scheduler works in its own thread (rather than
    APScheduler's BlockingScheduler in the main thread): a signal handler that stopped a scheduler
    running in its own thread could deadlock on a lock that thread held when the signal came, so
    the handler only records the signal and the main thread stops the scheduler.
    """
    scheduler, _ = make_scheduler(trigger, timezone, grace_s, job, job_timeout_s, job_id, name, more)
    if stock is not None:
        every_s, stock_job = stock
        add_stock_job(scheduler, every_s, BoundedJob(stock_job, job_timeout_s))  # it shares the worker
    bounded = [j.func for j in scheduler.get_jobs() if isinstance(j.func, BoundedJob)]
    received: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        if received:
            os.write(2, b"planner schedule: second signal, exiting now\n")
            os._exit(128 + signum)
        received.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        scheduler.start()
        log.info("next run: %s", next_run_text(scheduler.get_jobs(), timezone))
        while not received:
            time.sleep(poll_s)
        name = signal.Signals(received[0]).name
        log.info(
            "%s: stopping (a running job gets %g s to finish; send it again to exit now)", name, stop_wait_s
        )
        scheduler.pause()  # no new run from here on
        ends = time.monotonic() + stop_wait_s
        if not all(b.wait_idle(max(0.0, ends - time.monotonic())) for b in bounded):
            log.error("the running job did not finish within %g s: exiting without it", stop_wait_s)
        for b in bounded:
            b.stop()
        scheduler.shutdown(wait=True)
    finally:
        if scheduler.running:
            scheduler.shutdown(wait=False)
        for s, handler in previous.items():
            signal.signal(s, handler)
    log.info("scheduler stopped")


# --- alerts and the stock refresh between nights (planner.alerts) ---------------------------------


def summary_step(app: App) -> None:
    """Send the report's summary to [schedule] report_channels, if any; never raises."""
    if not app.config.section("schedule").get("report_channels"):
        return
    try:
        from reports.build import build_report

        engine = app.engine()
        lang = language(app.config)  # the digest's scope notes in the team's language, as its lines
        cheapest = cheapest_for((), (), app.config.section("fx"), scope_setting(app.config), lang)
        report = build_report(
            engine, report_day(app.config), known_providers=PROVIDERS, chart=False, cheapest=cheapest
        )
        for d in send_digest(engine, app.config, report):
            if d.ok:
                log.info("summary: sent to %s (%s)", d.channel, d.kind)
            else:
                log.error("summary: %s (%s) failed: %s", d.channel, d.kind, d.error)
    except PlannerError as err:
        log.error("summary not sent: %s%s", err.message, f" ({err.hint})" if err.hint else "")
    except Exception:
        log.exception("summary crashed")


def stock_providers(config: Config) -> list[str]:
    """[schedule] stock_providers as canonical names; UnknownNameError for a typo."""
    return [canonical_provider(p) for p in config.section("schedule").get("stock_providers", [])]


def run_stock_job(app: App, holder: str = "planner schedule (stock)", alerts: bool = True) -> int:
    """Refresh [schedule] stock_providers (prices and stock) under the refresh lock, then (with
    ``alerts``) check the alerts. 0 all well, 1 a provider failed, 75 skipped because another refresh holds the lock."""
    from planner.ingest.refresh import run_refresh

    names = stock_providers(app.config)
    log.info("stock job: refreshing %s", ", ".join(names))
    try:
        summary = refresh_and_alert(
            app.engine(),
            app.config,
            lambda: run_refresh(
                app.engine(), app.config, names, progress=lambda line: log.info("stock: %s", line)
            ),
            holder=holder,
            say=log.info,
            warn=log.warning,
            alerts=alerts,
        )
    except LockBusy as err:
        log.warning("another refresh is running (%s): skipping this stock run", err.holder)
        return err.exit_code
    except PlannerError as err:
        log.error("stock refresh failed: %s", err.message)
        return err.exit_code
    except Exception:
        log.exception("stock refresh crashed")
        return 1
    return summary.exit_code


def add_stock_job(scheduler: Any, every_s: float, job: Callable[[], Any]) -> Any:
    """Run ``job`` every ``every_s`` seconds beside the nightly job (same single worker: never both at
    once); a run missed while another job ran is skipped, not queued."""
    from apscheduler.triggers.interval import IntervalTrigger

    return scheduler.add_job(
        job,
        IntervalTrigger(seconds=every_s, timezone=scheduler.timezone),
        id="stock-refresh",
        name="stock and price refresh",
        coalesce=True,
        max_instances=1,
        misfire_grace_time=60,
    )
