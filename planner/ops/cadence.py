"""How often each scheduled job runs, and whether it is due now.

The jobs are ``prices`` (refresh every enabled provider), ``stock`` (refresh ``[schedule]
stock_providers``), ``alerts`` (check the ``[[alerts]]`` rules) and ``report`` (write it, e-mail it, send
its summary). Each has a *cadence* in ``[schedule]``, read by the one parser here:

- ``"nightly"``: every day at ``[schedule] at`` (default 02:00);
- ``"weekly mon"`` (or ``"weekly monday"``, any day): that day at ``at``;
- either with a time of its own: ``"nightly 03:30"``, ``"weekly fri 18:00"``;
- a five-field crontab line, read as cron reads it: ``"0 8 * * 1"``;
- ``"off"``;
- the stock job also a duration, ``"30m"``, ``"1h"`` or ``"every 2h"``; the alerts job also
  ``"after each refresh"`` (its default: checked after every refresh of the scheduler's).

The older ``[schedule] cron`` and ``stock_every`` still work: a ``cron`` that is set is the cadence of
``prices`` and ``report`` left at their default ``nightly``; a ``stock_every`` that is set is the
cadence of ``stock`` left ``off``.

A job is *due* when its most recent scheduled time at or before now (in ``[schedule] timezone``) is
later than the start of its last completed run, recorded in ``scrape_runs`` (provider ``schedule``,
kind the job's name); a job that never ran is due. ``planner schedule --once`` runs what is due, so
a timer or a cron line that runs it nightly or hourly honours every cadence.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from db.records import as_datetime
from planner.config import Config, zone
from planner.errors import UsageError
from vocab import RunStatus

JOBS = ("prices", "stock", "alerts", "report")  # also the order they run in when due together
AFTER_REFRESH = "after each refresh"
RUN_PROVIDER = "schedule"  # scrape_runs.provider of a job's record; its kind is the job's name

# A timer or a clock that fires this much before a scheduled time still counts as that time's run (a
# nightly timer at 01:59:30 must not skip the night).
EARLY_S = 60

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CRON_DAY = {name: (i + 1) % 7 for i, name in enumerate(_DAYS)}  # crontab: 0 = Sunday
_DURATION = re.compile(r"(?:every\s+)?(\d+)\s*(m|min|h|hour|hours)")
_TIME = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
STOCK_EVERY_MIN_S = 600  # a provider polled more often than every 10 minutes would not be polite

AT_HINT = 'a time of day as HH:MM, e.g. "02:00"'


# ---- crontab lines ----------------------------------------------------------------------------------

_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab numbering: 0 (and 7) = Sunday
CRON_HINT = "five fields, minute hour day month weekday, e.g. '0 2 * * *' (02:00 every day)"


def crontab_trigger(cron: str, timezone: str, setting: str = "[schedule] cron"):  # noqa: ANN201 - apscheduler's
    """An APScheduler CronTrigger for a standard five-field crontab line, read the way cron reads it.

    APScheduler 3 numbers weekdays from Monday = 0 (its ``from_crontab`` warns about this); cron
    numbers them from Sunday = 0. The weekday field is therefore rewritten as day names first.
    A mistake is a UsageError naming ``setting``.
    """
    fields = cron.split()
    if len(fields) != 5:
        raise UsageError(f"{setting} {cron!r} has {len(fields)} field(s), not 5", hint=CRON_HINT)
    minute, hour, day, month, weekday = fields
    try:
        return _once_per_wall_clock_trigger()(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=crontab_weekdays(weekday),
            timezone=zone(timezone),
        )
    except ValueError as err:
        raise UsageError(f"{setting} {cron!r} is not valid: {err}", hint=CRON_HINT) from None


@functools.cache
def _once_per_wall_clock_trigger():  # noqa: ANN202 - a CronTrigger subclass, apscheduler imported lazily
    from apscheduler.triggers.cron import CronTrigger

    class OncePerWallClock(CronTrigger):
        """A CronTrigger that never fires at a local time of day it has already fired at: when the
        clocks go back (fall-back night), 01:30 happens twice and cron runs the job once."""

        def get_next_fire_time(self, previous_fire_time, now):  # noqa: ANN001, ANN201 - apscheduler's
            fire = super().get_next_fire_time(previous_fire_time, now)
            while fire is not None and previous_fire_time is not None:
                if _wall_clock(fire, self.timezone) > _wall_clock(previous_fire_time, self.timezone):
                    break
                fire = super().get_next_fire_time(fire, fire)  # the repeated hour: the next one after it
            return fire

    return OncePerWallClock


def _wall_clock(when: dt.datetime, tz: Any) -> dt.datetime:
    return when.astimezone(tz).replace(tzinfo=None)


def crontab_weekdays(field: str) -> str:
    """A crontab weekday field (``1-5``, ``0,6``, ``*/2``, ``mon-fri``, ``7``) as day names."""
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        span, _, step_text = part.partition("/")
        if step_text and not step_text.isdigit() or step_text == "0":
            raise ValueError(f"bad step in weekday {part!r}")
        step = int(step_text or 1)
        if span == "*":
            low, high = 0, 6
        elif "-" in span:
            first, last = span.split("-", 1)
            low, high = _weekday(first), _weekday(last)
            if high == 0 and low > 0:
                high = 7  # "5-0" or "fri-sun": up to Sunday
        else:
            low = _weekday(span)
            high = 6 if step_text else low
        if low > high:
            raise ValueError(f"weekday range {span!r} runs backwards")
        days.update(d % 7 for d in range(low, high + 1, step))
    return ",".join(_WEEKDAYS[d] for d in sorted(days))


def _weekday(token: str) -> int:
    if token.isdigit() and 0 <= int(token) <= 7:
        return int(token)
    if token[:3] in _WEEKDAYS and len(token) == 3:
        return _WEEKDAYS.index(token[:3])
    raise ValueError(f"bad weekday {token!r} (0-7 or sun..sat)")


def next_runs(trigger: Any, count: int, now: dt.datetime | None = None) -> list[dt.datetime]:
    """The next ``count`` fire times after ``now`` (aware datetimes in the trigger's time zone)."""
    now = now or dt.datetime.now(trigger.timezone)
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    runs: list[dt.datetime] = []
    previous = None
    for _ in range(count):
        fire = trigger.get_next_fire_time(previous, now)
        if fire is None:
            break
        runs.append(fire)
        previous = now = fire
    return runs


STOCK_EVERY_HINT = 'a number and a unit, e.g. "30m", "1h" or "2h" (at least 10 minutes), or "" for off'


def every_seconds(text: str) -> int | None:
    """``"1h"`` -> 3600, ``"30m"`` -> 1800, ``""`` -> None (off); UsageError for anything else."""
    text = text.strip().lower()
    if not text:
        return None
    found = re.fullmatch(r"(\d+)\s*(m|min|h|hour|hours)", text)
    if not found:
        raise UsageError(f"[schedule] stock_every {text!r} is not a duration", hint=STOCK_EVERY_HINT)
    seconds = int(found.group(1)) * (60 if found.group(2).startswith("m") else 3600)
    if not STOCK_EVERY_MIN_S <= seconds <= 86400:
        raise UsageError(f"[schedule] stock_every {text!r} is out of range", hint=STOCK_EVERY_HINT)
    return seconds


def cadence_hint(job: str) -> str:
    """What a cadence of ``job`` may be, for an error's hint."""
    extra = {"stock": ', a duration such as "1h"', "alerts": f', "{AFTER_REFRESH}"'}.get(job, "")
    return f'"nightly", "weekly mon" (any day), a cron line such as "0 8 * * 1"{extra}, or "off"'


@dataclass(frozen=True)
class Cadence:
    """One job's cadence: a crontab line (nightly, weekly and cron cadences), a period in seconds (a
    duration), after each refresh, or off (none of those)."""

    job: str
    setting: str  # where it was read: "[schedule] report", or "[schedule] cron" for an older config
    text: str  # as written there
    label: str  # for people: "nightly at 02:00", "weekly on Monday at 02:00", "cron '0 8 * * 1'"
    cron: str | None = None
    every_s: int | None = None
    after_refresh: bool = False

    @property
    def timed(self) -> bool:
        """Runs at times of its own (not off, not after each refresh)."""
        return self.cron is not None or self.every_s is not None

    def trigger(self, timezone: str) -> Any:
        """The APScheduler trigger of a timed cadence (None otherwise)."""
        if self.cron is not None:
            return crontab_trigger(self.cron, timezone, setting=self.setting)
        if self.every_s is not None:
            from apscheduler.triggers.interval import IntervalTrigger

            return IntervalTrigger(seconds=self.every_s, timezone=zone(timezone))
        return None


def time_of_day(text: str, setting: str = "[schedule] at") -> tuple[int, int]:
    """``"02:00"`` -> (2, 0); a UsageError naming ``setting`` for anything else."""
    found = _TIME.fullmatch(text.strip())
    if not found:
        raise UsageError(f"{setting} {text!r} is not a time of day", hint=AT_HINT)
    return int(found.group(1)), int(found.group(2))


def parse_cadence(job: str, text: str, at: str = "02:00", setting: str | None = None) -> Cadence:
    """The cadence ``text`` of ``job``; ``at`` is the time of day of nightly and weekly ones. A one-line
    UsageError naming ``setting`` (default ``[schedule] JOB``) for anything that is not one."""
    setting = setting or f"[schedule] {job}"
    words = text.strip().lower().split()
    made = functools.partial(Cadence, job, setting, text)  # then its label and kind

    def not_a_cadence() -> UsageError:
        return UsageError(f"{setting} {text!r} is not a cadence", hint=cadence_hint(job))

    if not words:
        raise not_a_cadence()
    if words == ["off"]:
        return made("off")
    if " ".join(words) in (AFTER_REFRESH, "after refresh"):
        if job != "alerts":
            raise not_a_cadence()
        return made(AFTER_REFRESH, after_refresh=True)
    if words[0] in ("nightly", "daily", "weekly"):
        day, rest = None, words[1:]
        if words[0] == "weekly":
            if not rest or _day(rest[0]) is None:
                raise not_a_cadence()
            day, rest = _day(rest[0]), rest[1:]
        if rest[:1] == ["at"]:
            rest = rest[1:]
        if len(rest) > 1:
            raise not_a_cadence()
        if rest and not _TIME.fullmatch(rest[0]):
            raise UsageError(f"{setting} {text!r} is not a time of day", hint=AT_HINT)
        hour, minute = time_of_day(rest[0] if rest else at)
        clock = f"{hour:02d}:{minute:02d}"
        if day is None:
            return made(f"nightly at {clock}", cron=f"{minute} {hour} * * *")
        return made(f"weekly on {day.title()} at {clock}", cron=f"{minute} {hour} * * {_CRON_DAY[day]}")
    duration = _DURATION.fullmatch(" ".join(words))
    if duration:
        if job != "stock":
            raise UsageError(
                f"{setting} {text!r}: only the stock job runs every so often", hint=cadence_hint(job)
            )
        seconds = int(duration.group(1)) * (60 if duration.group(2).startswith("m") else 3600)
        if not STOCK_EVERY_MIN_S <= seconds <= 86400:
            raise UsageError(
                f"{setting} {text!r} is out of range", hint="at least 10 minutes and at most a day"
            )
        return made(f"every {_duration_text(seconds)}", every_s=seconds)
    if re.match(r"[\d*]", words[0]):  # a crontab line: its own messages say what is wrong with it
        crontab_trigger(text.strip(), "UTC", setting=setting)
        return made(f"cron {text.strip()!r}", cron=text.strip())
    raise not_a_cadence()


def _day(word: str) -> str | None:
    """``mon``, ``monday`` (any case) -> ``monday``; None for what is not a day."""
    for name in _DAYS:
        if word in (name, name[:3]):
            return name
    return None


def _duration_text(seconds: int) -> str:
    return f"{seconds // 3600}h" if seconds % 3600 == 0 else f"{seconds // 60}m"


def cadences(config: Config) -> dict[str, Cadence]:
    """Every job's cadence from ``[schedule]``, older settings included, each checked (a mistake is a
    UsageError now, not at 02:00), in ``JOBS`` order."""
    settings = config.section("schedule")
    at = settings["at"]
    time_of_day(at)
    older_cron = settings.get("cron", "").strip()
    out: dict[str, Cadence] = {}
    for job in JOBS:
        text = settings[job]
        if older_cron and job in ("prices", "report") and text.strip().lower() == "nightly":
            # the older single line still decides a job left at its default
            out[job] = parse_cadence(job, older_cron, at, setting="[schedule] cron")
        elif job == "stock" and text.strip().lower() == "off" and settings.get("stock_every", "").strip():
            every = every_seconds(settings["stock_every"])  # its own messages, as before
            assert every is not None  # not empty: checked above
            label = f"every {_duration_text(every)}"
            out[job] = Cadence(job, "[schedule] stock_every", settings["stock_every"], label, every_s=every)
        else:
            out[job] = parse_cadence(job, text, at)
    return out


# ---- is it due? -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Due:
    """Whether a job is due at ``now``, and why (a phrase for the log: "due: scheduled Mon ...")."""

    job: str
    due: bool
    why: str
    scheduled: dt.datetime | None = None  # its most recent scheduled time (or, never run, now)
    next_time: dt.datetime | None = None  # when it is due next, if it is not now


def latest_fire(trigger: Any, now: dt.datetime) -> dt.datetime | None:
    """The most recent fire time of a cron ``trigger`` at or before ``now`` (None if none in four
    years). APScheduler only looks forward, so this searches: the first fire at or after a moment
    only moves later as the moment does, so the latest fire before ``now`` is found by halving."""

    def first_from(second: int) -> dt.datetime | None:
        start = dt.datetime.fromtimestamp(second, dt.UTC).astimezone(trigger.timezone)
        return trigger.get_next_fire_time(None, start)

    end = int(now.timestamp())
    for days in (1, 8, 32, 367, 4 * 366 + 1):
        low = end - days * 86400
        fire = first_from(low)
        if fire is not None and fire.timestamp() <= end:
            break
    else:
        return None
    high = end + 1  # the first fire from here is after now
    while high - low > 1:
        middle = (low + high) // 2
        fire = first_from(middle)
        if fire is not None and fire.timestamp() <= end:
            low = middle
        else:
            high = middle
    return first_from(low)


def _first_of_repeat(trigger: Any, fire: dt.datetime) -> dt.datetime:
    """On the night the clocks go back a time of day happens twice and runs once, the first time: the
    second is the same scheduled run."""
    earlier = latest_fire(trigger, fire.astimezone(dt.UTC) - dt.timedelta(seconds=1))
    tz = trigger.timezone
    wall = fire.astimezone(tz).replace(tzinfo=None)
    if earlier is not None and earlier.astimezone(tz).replace(tzinfo=None) == wall:
        return earlier
    return fire


def when_text(when: dt.datetime, timezone: Any) -> str:
    """``Mon 2026-12-07 02:00 CST``: a scheduled time in the schedule's zone, for the log."""
    return when.astimezone(timezone).strftime("%a %Y-%m-%d %H:%M %Z")


def is_due(
    cadence: Cadence,
    trigger: Any,
    last_started: dt.datetime | None,
    now: dt.datetime,
    within_s: float | None = None,
) -> Due:
    """Whether ``cadence``'s job is due at ``now`` (aware) given the start of its last completed run
    (aware, None if it never ran). ``within_s``: only if its scheduled time is at most that old (the
    long-running scheduler's grace; ``--once`` catches up whatever was missed)."""
    job = cadence.job
    # in UTC: two times in one zone compare (and subtract) by the wall clock, which a fall-back night repeats
    now = now.astimezone(dt.UTC)
    last_started = last_started.astimezone(dt.UTC) if last_started else None
    if cadence.after_refresh:
        return Due(job, False, "runs after each refresh")
    if not cadence.timed:
        return Due(job, False, "off")
    tz = trigger.timezone
    soon = now + dt.timedelta(seconds=EARLY_S)
    if cadence.every_s is not None:
        if last_started is None:
            return Due(job, True, "due: never ran", now)
        scheduled = last_started + dt.timedelta(seconds=cadence.every_s)
        if scheduled > soon:
            return Due(job, False, f"not due until {when_text(scheduled, tz)}", next_time=scheduled)
    else:
        latest = latest_fire(trigger, soon)
        if latest is None:
            upcoming = trigger.get_next_fire_time(None, now)
            until = f"not due until {when_text(upcoming, tz)}" if upcoming else "never due"
            return Due(job, False, until, next_time=upcoming)
        scheduled = _first_of_repeat(trigger, latest).astimezone(dt.UTC)
        if last_started is not None and last_started >= scheduled - dt.timedelta(seconds=EARLY_S):
            upcoming = trigger.get_next_fire_time(scheduled, soon + dt.timedelta(seconds=1))
            until = f"not due until {when_text(upcoming, tz)}" if upcoming else "never due again"
            return Due(job, False, until, scheduled, upcoming)
        late_s = (now - scheduled).total_seconds()
        if within_s is not None and late_s > within_s:  # (a period is never missed: it runs when due)
            return Due(job, False, f"missed its run of {when_text(scheduled, tz)}", scheduled)
        if last_started is None:
            return Due(job, True, f"due: never ran (scheduled {when_text(scheduled, tz)})", scheduled)
    last = f", last run {when_text(last_started, tz)}" if last_started else ""
    return Due(job, True, f"due: scheduled {when_text(scheduled, tz)}{last}", scheduled)


def plan(
    config: Config,
    last_runs: Mapping[str, dt.datetime],
    now: dt.datetime,
    within_s: float | None = None,
    found: Mapping[str, Cadence] | None = None,
) -> list[Due]:
    """Each job, due or not, in ``JOBS`` order, at ``now`` given the starts of their last completed runs."""
    timezone = config.section("schedule")["timezone"]
    found = found or cadences(config)
    return [is_due(c, c.trigger(timezone), last_runs.get(job), now, within_s) for job, c in found.items()]


# ---- the record of each job's runs ------------------------------------------------------------------


def last_runs(engine: Any) -> dict[str, dt.datetime]:
    """The start (aware, UTC) of each job's newest completed run: ok or failed; one skipped because
    another refresh held the lock, or still running (or killed), is not done and stays due."""
    from sqlalchemy import func, select

    from db.schema import scrape_runs

    query = (
        select(scrape_runs.c.kind, func.max(scrape_runs.c.started_at))
        .where(
            scrape_runs.c.provider == RUN_PROVIDER,
            scrape_runs.c.status.in_((RunStatus.OK, RunStatus.PARTIAL, RunStatus.FAILED)),
        )
        .group_by(scrape_runs.c.kind)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return {kind: as_datetime(started).replace(tzinfo=dt.UTC) for kind, started in rows if started}


def start_record(engine: Any, job: str, source: str) -> int:
    """Open the record of one run of ``job`` (status running)."""
    from db import store

    with store.writing(engine) as conn:
        return store.start_run(conn, RUN_PROVIDER, job, source=source)


def finish_record(engine: Any, run_id: int, code: int | None) -> None:
    """Close it by the job's exit code: 0 ok, 75 (another refresh held the lock) skipped, else failed."""
    from db import store
    from planner.ingest.lock import EXIT_LOCK_BUSY

    if code == 0:
        status, error = RunStatus.OK, None
    elif code == EXIT_LOCK_BUSY:
        status, error = RunStatus.SKIPPED, "another refresh held the lock"
    else:
        status = RunStatus.FAILED
        error = (
            "abandoned after [schedule] job_timeout_s" if code is None else f"exit code {code}; see the log"
        )
    with store.writing(engine) as conn:
        store.finish_run(conn, run_id, status, error=error)


# ---- what runs when ---------------------------------------------------------------------------------


def upcoming_times(
    cadence: Cadence, timezone: str, count: int, now: dt.datetime, last: dt.datetime | None = None
) -> list[dt.datetime]:
    """The next ``count`` times ``cadence``'s job runs after ``now``; a period counted from the job's
    ``last`` run (as ``--once`` counts it), or from ``now`` (as the long-running scheduler, from its
    start)."""
    if cadence.cron is not None:
        return next_runs(cadence.trigger(timezone), count, now)
    if cadence.every_s is not None:
        step = dt.timedelta(seconds=cadence.every_s)
        start = (last or now).astimezone(zone(timezone)).replace(microsecond=0)
        while start + step <= now:  # overdue: due now, then every period from now
            start = now.astimezone(zone(timezone)).replace(microsecond=0)
        return [start + step * k for k in range(1, count + 1)]
    return []


def schedule_record(
    config: Config, count: int, now: dt.datetime, last: Mapping[str, dt.datetime] | None = None
) -> dict[str, Any]:
    """Each job's cadence and next run times, and the next ``count`` runs of all of them together
    (each with the jobs it runs, in the order they run): ``planner schedule --list``. With ``last``
    (the starts of the jobs' last completed runs), each job's last run and whether ``--once`` would
    run it now."""
    timezone = config.section("schedule")["timezone"]
    found = cadences(config)
    due = {v.job: v.due for v in plan(config, last, now, found=found)} if last is not None else {}
    jobs = []
    runs: dict[dt.datetime, list[str]] = {}
    for job, cadence in found.items():
        ran = last.get(job) if last is not None else None
        times = upcoming_times(cadence, timezone, count, now, ran)
        record: dict[str, Any] = {
            "job": job,
            "cadence": cadence.text,
            "setting": cadence.setting,
            "description": cadence.label,
            "next_runs": [t.isoformat() for t in times],
        }
        if last is not None:
            record["last_run"] = ran.isoformat() if ran else None
            record["due_now"] = due[job]
        jobs.append(record)
        for when in times:
            runs.setdefault(when, []).append(job)
    first = sorted(runs)[:count]
    return {
        "timezone": timezone,
        "at": config.section("schedule")["at"],
        "jobs": jobs,
        "next_runs": [t.isoformat() for t in first],
        "runs": [{"at": t.isoformat(), "jobs": runs[t]} for t in first],
    }
