"""A cadence per scheduled job (``[schedule] prices``, ``stock``, ``alerts``, ``report``): the parser,
whether a job is due across a week, ``schedule --once`` and ``--job`` on a fake clock, the long-running
scheduler's triggers, and the older ``cron`` and ``stock_every`` settings."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from db.schema import scrape_runs
from planner.config import load_config
from planner.errors import UsageError
from planner.ingest.lock import EXIT_LOCK_BUSY, refresh_lock
from planner.ops.cadence import EARLY_S, cadences, is_due, latest_fire, parse_cadence, plan
from planner.ops.scheduler import crontab_trigger, next_runs, timed_groups
from tests.conftest import price_row, write_csv
from tests.helpers.schedule import fake_refresh

SHANGHAI = ZoneInfo("Asia/Shanghai")
TUESDAY = dt.datetime(2026, 12, 1, 2, 5, tzinfo=SHANGHAI)  # 2026-12-01 is a Tuesday
MONDAY = dt.datetime(2026, 12, 7, 2, 5, tzinfo=SHANGHAI)


def config_with(tmp_path: Path, schedule: str, name: str = "s.toml"):  # noqa: ANN201
    path = tmp_path / name
    path.write_text(f"[schedule]\n{schedule}\n", encoding="utf-8")
    return load_config(path, env={}, cwd=tmp_path)


# ---- the parser -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("job", "text", "cron", "label"),
    [
        ("report", "nightly", "0 2 * * *", "nightly at 02:00"),
        ("report", "Nightly", "0 2 * * *", "nightly at 02:00"),
        ("prices", "nightly 03:30", "30 3 * * *", "nightly at 03:30"),
        ("prices", "nightly at 3:30", "30 3 * * *", "nightly at 03:30"),
        ("report", "weekly mon", "0 2 * * 1", "weekly on Monday at 02:00"),
        ("report", "weekly monday", "0 2 * * 1", "weekly on Monday at 02:00"),
        ("report", "weekly Sunday", "0 2 * * 0", "weekly on Sunday at 02:00"),
        ("report", "weekly SAT", "0 2 * * 6", "weekly on Saturday at 02:00"),
        ("report", "weekly fri 18:00", "0 18 * * 5", "weekly on Friday at 18:00"),
        ("alerts", "weekly thu", "0 2 * * 4", "weekly on Thursday at 02:00"),
        ("report", "0 8 * * 1", "0 8 * * 1", "cron '0 8 * * 1'"),
        ("stock", "*/30 9-18 * * 1-5", "*/30 9-18 * * 1-5", "cron '*/30 9-18 * * 1-5'"),
    ],
)
def test_a_cadence_at_times_is_a_crontab_line(job, text, cron, label):
    cadence = parse_cadence(job, text)
    assert (cadence.cron, cadence.label, cadence.every_s, cadence.timed) == (cron, label, None, True)


def test_nightly_and_weekly_run_at_the_schedules_at():
    assert parse_cadence("report", "weekly wed", at="07:45").cron == "45 7 * * 3"
    assert parse_cadence("prices", "nightly", at="23:00").label == "nightly at 23:00"


def test_off_a_duration_and_after_each_refresh():
    off = parse_cadence("report", "off")
    assert (off.timed, off.after_refresh, off.label) == (False, False, "off")
    assert parse_cadence("stock", "1h").every_s == 3600
    assert parse_cadence("stock", "every 30m").every_s == 1800
    assert parse_cadence("stock", "every 30m").label == "every 30m"
    after = parse_cadence("alerts", "after each refresh")
    assert after.after_refresh and not after.timed


@pytest.mark.parametrize(
    ("job", "text", "message"),
    [
        ("report", "weekly funday", "[schedule] report 'weekly funday' is not a cadence"),
        ("report", "weekly", "[schedule] report 'weekly' is not a cadence"),
        ("report", "fortnightly", "[schedule] report 'fortnightly' is not a cadence"),
        ("report", "", "[schedule] report '' is not a cadence"),
        ("prices", "after each refresh", "[schedule] prices 'after each refresh' is not a cadence"),
        ("report", "1h", "[schedule] report '1h': only the stock job runs every so often"),
        ("stock", "5m", "[schedule] stock '5m' is out of range"),
        ("report", "nightly 25:00", "[schedule] report 'nightly 25:00' is not a time of day"),
        ("report", "weekly mon 8pm", "[schedule] report 'weekly mon 8pm' is not a time of day"),
        ("report", "0 2 * *", "[schedule] report '0 2 * *' has 4 field(s), not 5"),
        ("prices", "0 2 * * 8", "[schedule] prices '0 2 * * 8' is not valid: bad weekday '8'"),
    ],
)
def test_a_bad_cadence_is_a_usage_error_naming_the_key(job, text, message):
    with pytest.raises(UsageError) as caught:
        parse_cadence(job, text)
    assert caught.value.message.startswith(message), caught.value.message
    assert caught.value.hint and "\n" not in caught.value.message


def test_a_bad_cadence_stops_schedule_at_start_in_one_line(run_cli, tmp_path):
    path = tmp_path / "bad.toml"
    for setting, said in (
        ('report = "weekly funday"', "[schedule] report 'weekly funday' is not a cadence"),
        ('at = "2am"', "[schedule] at '2am' is not a time of day"),
    ):
        path.write_text(f"[schedule]\n{setting}\n", encoding="utf-8")
        for args in (["schedule", "--list"], ["schedule", "--once"], ["schedule"]):
            result = run_cli("--config", str(path), *args)
            assert result.exit_code == 2, result.output
            (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
            assert said in error and "Traceback" not in result.output
            assert "weekly mon" in result.stderr or "HH:MM" in result.stderr  # the hint


def test_the_defaults_keep_todays_schedule(tmp_path):
    found = cadences(load_config(env={}, cwd=tmp_path))
    assert {job: c.label for job, c in found.items()} == {
        "prices": "nightly at 02:00",
        "stock": "off",
        "alerts": "after each refresh",
        "report": "nightly at 02:00",
    }
    assert found["prices"].cron == found["report"].cron == "0 2 * * *"


# ---- the older settings -----------------------------------------------------------------------------


def test_an_older_cron_is_the_time_of_prices_and_report(tmp_path, run_cli):
    found = cadences(config_with(tmp_path, 'cron = "0 3 * * *"'))
    assert found["prices"].cron == found["report"].cron == "0 3 * * *"
    assert found["prices"].setting == found["report"].setting == "[schedule] cron"
    (group,) = timed_groups(found, "Asia/Shanghai")  # one job, refresh then report, as before
    assert group[:2] == ("prices-report", "prices, report")
    first = next_runs(group[2], 2, TUESDAY)
    assert first == [
        dt.datetime(2026, 12, 1, 3, 0, tzinfo=SHANGHAI),
        dt.datetime(2026, 12, 2, 3, 0, tzinfo=SHANGHAI),
    ]
    listed = run_cli("--config", str(tmp_path / "s.toml"), "schedule", "--list")
    assert listed.exit_code == 0, listed.output
    assert "prices  cron '0 3 * * *'  ([schedule] cron)" in listed.stdout
    runs = [line for line in listed.stdout.splitlines() if line.startswith("  20")]
    assert len(runs) == 5 and all(
        " 03:00 Asia/Shanghai " in r and r.endswith("prices, then report") for r in runs
    )


def test_a_job_given_its_own_cadence_wins_over_the_older_cron(tmp_path):
    found = cadences(config_with(tmp_path, 'cron = "0 3 * * *"\nreport = "weekly mon 04:00"'))
    assert (found["prices"].cron, found["report"].cron) == ("0 3 * * *", "0 4 * * 1")


def test_an_older_stock_every_is_the_stock_cadence(tmp_path):
    found = cadences(config_with(tmp_path, 'stock_every = "2h"'))
    assert (found["stock"].every_s, found["stock"].setting) == (7200, "[schedule] stock_every")
    with pytest.raises(UsageError, match="stock_every 'every hour' is not a duration"):
        cadences(config_with(tmp_path, 'stock_every = "every hour"'))


# ---- due or not -------------------------------------------------------------------------------------


def test_the_latest_scheduled_time_is_found_backwards():
    weekly = crontab_trigger("0 2 * * 1", "Asia/Shanghai")
    assert latest_fire(weekly, TUESDAY) == dt.datetime(2026, 11, 30, 2, 0, tzinfo=SHANGHAI)
    assert latest_fire(weekly, dt.datetime(2026, 11, 30, 2, 0, tzinfo=SHANGHAI)) == dt.datetime(
        2026, 11, 30, 2, 0, tzinfo=SHANGHAI
    )
    yearly = crontab_trigger("30 6 29 2 *", "Asia/Shanghai")  # 29 February: 2024, then 2028
    assert latest_fire(yearly, TUESDAY) == dt.datetime(2024, 2, 29, 6, 30, tzinfo=SHANGHAI)
    minutely = crontab_trigger("* * * * *", "Asia/Shanghai")
    assert latest_fire(minutely, TUESDAY + dt.timedelta(seconds=59)) == TUESDAY


def _week_of_timer(tmp_path, schedule: str, first: dt.datetime, every: dt.timedelta, until: dt.datetime):
    """What a timer running `schedule --once` every ``every`` from ``first`` runs: {job: [times]}."""
    config = config_with(tmp_path, schedule)
    last: dict[str, dt.datetime] = {}
    ran: dict[str, list[dt.datetime]] = {}
    now = first
    while now <= until:
        for verdict in plan(config, last, now):
            if verdict.due:
                last[verdict.job] = now
                ran.setdefault(verdict.job, []).append(now)
        now += every
    return ran


def test_an_hourly_timer_runs_the_nightly_refresh_daily_and_the_weekly_report_on_mondays(tmp_path):
    start = dt.datetime(2026, 12, 1, 10, 30, tzinfo=SHANGHAI)  # a Tuesday, on a fresh install
    ran = _week_of_timer(
        tmp_path, 'report = "weekly mon"', start, dt.timedelta(hours=1), start + dt.timedelta(days=14)
    )
    nights = [dt.datetime(2026, 12, d, 2, 30, tzinfo=SHANGHAI) for d in range(2, 16)]
    assert ran["prices"] == [start, *nights]  # a first run ever is due, then every night
    assert ran["report"] == [
        start,
        dt.datetime(2026, 12, 7, 2, 30, tzinfo=SHANGHAI),
        dt.datetime(2026, 12, 14, 2, 30, tzinfo=SHANGHAI),
    ]
    assert set(ran) == {"prices", "report"}  # stock off, alerts after each refresh


def test_a_nightly_timer_a_little_early_still_runs_that_night(tmp_path):
    start = dt.datetime(2026, 11, 30, 1, 59, 30, tzinfo=SHANGHAI)  # EARLY_S before 02:00, a Monday
    assert EARLY_S >= 30
    ran = _week_of_timer(
        tmp_path, 'report = "weekly mon"', start, dt.timedelta(days=1), start + dt.timedelta(days=7)
    )
    assert len(ran["prices"]) == 8 and [r.strftime("%a") for r in ran["report"]] == ["Mon", "Mon"]


def test_a_stock_duration_is_due_that_long_after_its_last_run(tmp_path):
    start = dt.datetime(2026, 12, 1, 10, 0, tzinfo=SHANGHAI)
    ran = _week_of_timer(
        tmp_path,
        'prices = "off"\nreport = "off"\nstock = "2h"',
        start,
        dt.timedelta(minutes=30),
        start + dt.timedelta(hours=6),
    )
    assert ran == {"stock": [start + dt.timedelta(hours=h) for h in (0, 2, 4, 6)]}


def test_not_due_says_until_when(tmp_path):
    config = config_with(tmp_path, 'report = "weekly mon"')
    found = cadences(config)
    last = {"report": dt.datetime(2026, 11, 30, 2, 0, 1, tzinfo=SHANGHAI)}
    verdict = is_due(found["report"], found["report"].trigger("Asia/Shanghai"), last["report"], TUESDAY)
    assert not verdict.due and verdict.why == "not due until Mon 2026-12-07 02:00 CST"
    again = is_due(found["report"], found["report"].trigger("Asia/Shanghai"), last["report"], MONDAY)
    assert again.due and again.why == (
        "due: scheduled Mon 2026-12-07 02:00 CST, last run Mon 2026-11-30 02:00 CST"
    )
    # the long-running scheduler runs a job with another's only when its time is within the grace
    late = is_due(found["report"], found["report"].trigger("Asia/Shanghai"), None, TUESDAY, within_s=3600)
    assert not late.due and late.why == "missed its run of Mon 2026-11-30 02:00 CST"


def test_the_fall_back_night_runs_a_repeated_time_once():
    trigger = crontab_trigger("30 1 * * *", "America/New_York")
    zone = ZoneInfo("America/New_York")
    first = dt.datetime(2026, 11, 1, 1, 30, tzinfo=zone)  # EDT; an hour later 01:30 EST comes again
    second = first.astimezone(dt.UTC) + dt.timedelta(hours=1)
    cadence = parse_cadence("prices", "30 1 * * *")
    ran = first.astimezone(dt.UTC)  # as the database records it
    assert latest_fire(trigger, second + dt.timedelta(minutes=5)).astimezone(dt.UTC) in (ran, second)
    verdict = is_due(cadence, trigger, ran, second + dt.timedelta(minutes=5))
    assert not verdict.due and verdict.scheduled == ran, verdict  # the first 01:30 (EDT)
    assert verdict.why == "not due until Mon 2026-11-02 01:30 EST"
    assert is_due(cadence, trigger, ran - dt.timedelta(days=1), second + dt.timedelta(minutes=5)).due


# ---- schedule --once and --job on a fake clock --------------------------------------------------------


class FakeClock:
    """One clock for the schedule's "now" and the times the database records runs at."""

    def __init__(self, now: dt.datetime):
        self.now = now

    def zoned(self, timezone: dt.tzinfo) -> dt.datetime:
        return self.now.astimezone(timezone)

    def utc(self) -> dt.datetime:
        return self.now.astimezone(dt.UTC).replace(tzinfo=None, microsecond=0)


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock(TUESDAY)
    monkeypatch.setattr("planner.ops.scheduler.clock", fake.zoned)
    monkeypatch.setattr("db.store.utcnow", fake.utc)
    return fake


@pytest.fixture
def jobs_ran(monkeypatch, tmp_path):
    """The jobs the scheduler ran, in order: a stand-in refresh (it stores one price) and report."""
    calls: list[str] = []
    prices = write_csv(tmp_path / "today.csv", [price_row()])
    monkeypatch.setattr("planner.ops.scheduler.refresh_step", fake_refresh(prices, calls))
    monkeypatch.setattr("planner.ops.scheduler.report_step", lambda app: calls.append("report") or 0)
    return calls


def weekly_config(tmp_path: Path, extra: str = "") -> str:
    path = tmp_path / "weekly.toml"
    path.write_text(
        f'[schedule]\nreport = "weekly mon"\nlog_file = "{tmp_path / "job.log"}"\n{extra}', encoding="utf-8"
    )
    return str(path)


def _said(result, job: str) -> str:
    return next(
        line.split(f"schedule: {job}: ", 1)[1]
        for line in result.stderr.splitlines()
        if f"schedule: {job}: " in line
    )


def test_once_with_a_weekly_report_refreshes_nightly_and_reports_on_mondays(
    run_cli, tmp_path, clock, jobs_ran
):
    config = weekly_config(tmp_path)
    clock.now = dt.datetime(2026, 11, 30, 2, 5, tzinfo=SHANGHAI)  # a Monday, a fresh install: both
    first = run_cli("--config", config, "schedule", "--once")
    assert first.exit_code == 0, first.output
    assert jobs_ran == ["refresh", "report"]

    clock.now = TUESDAY
    tuesday = run_cli("--config", config, "schedule", "--once")
    assert tuesday.exit_code == 0, tuesday.output
    assert jobs_ran == ["refresh", "report", "refresh"]  # the refresh, not the report
    assert _said(tuesday, "report") == "not due until Mon 2026-12-07 02:00 CST"
    assert _said(tuesday, "prices").startswith("due: scheduled Tue 2026-12-01 02:00 CST")
    assert _said(tuesday, "stock") == "off" and _said(tuesday, "alerts") == "runs after each refresh"

    again = run_cli("--config", config, "schedule", "--once")  # the same night, an hourly timer
    assert again.exit_code == 0 and jobs_ran == ["refresh", "report", "refresh"]
    assert (
        _said(again, "prices") == "not due until Wed 2026-12-02 02:00 CST" and "nothing due" in again.stderr
    )

    clock.now = MONDAY
    monday = run_cli("--config", config, "schedule", "--once")
    assert monday.exit_code == 0, monday.output
    assert jobs_ran == ["refresh", "report", "refresh", "refresh", "report"]  # refresh, then the report
    assert "job: prices, then report" in monday.stderr
    log = (tmp_path / "job.log").read_text(encoding="utf-8")
    assert log.count("report: not due until Mon 2026-12-07 02:00 CST") == 2


def test_once_records_each_job_run_where_planner_runs_shows_it(run_cli, tmp_path, clock, jobs_ran):
    config = weekly_config(tmp_path)
    assert run_cli("--config", config, "schedule", "--once").exit_code == 0
    runs = run_cli("--config", config, "runs", "--format", "json")
    records = [r for r in json.loads(runs.stdout)["runs"] if r["provider"] == "schedule"]
    assert sorted((r["kind"], r["status"]) for r in records) == [("prices", "ok"), ("report", "ok")]
    assert all(r["started_at"].startswith("2026-11-30T18:05") for r in records)  # Tuesday 02:05 in Shanghai


def test_job_runs_a_named_job_now_whatever_its_cadence(run_cli, tmp_path, clock, jobs_ran):
    config = weekly_config(tmp_path, 'prices = "off"\n')
    result = run_cli("--config", config, "schedule", "--job", "report")
    assert result.exit_code == 0, result.output
    assert jobs_ran == ["report"] and "job: report" in result.stderr
    both = run_cli("--config", config, "schedule", "--job", "report", "--job", "prices")
    assert both.exit_code == 0 and jobs_ran == ["report", "refresh", "report"]  # refreshes first
    # the report a --job ran on Tuesday counts: the next --once waits for Monday
    once = run_cli("--config", config, "schedule", "--once")
    assert (
        _said(once, "report") == "not due until Mon 2026-12-07 02:00 CST" and _said(once, "prices") == "off"
    )
    assert jobs_ran == ["report", "refresh", "report"]
    mixed = run_cli("--config", config, "schedule", "--list", "--job", "report")
    assert mixed.exit_code == 2 and "--job and --list do not go together" in mixed.output


def test_a_run_skipped_for_the_lock_stays_due(run_cli, tmp_path, clock, jobs_ran, db_url):
    from planner.app import App
    from planner.ops.cadence import last_runs

    config = weekly_config(tmp_path)
    app = App(config_file=config, db_url=db_url)
    with refresh_lock(app.engine(), holder="someone else"):
        busy = run_cli("--config", config, "schedule", "--once")
    assert busy.exit_code == EXIT_LOCK_BUSY and jobs_ran == []
    assert "not run: prices, report" in busy.stderr
    assert last_runs(app.engine()) == {}  # recorded as skipped: not done
    with app.engine().connect() as conn:
        kinds = conn.execute(
            select(scrape_runs.c.kind, scrape_runs.c.status).where(scrape_runs.c.provider == "schedule")
        ).all()
    assert kinds == [("prices", "skipped")]
    assert run_cli("--config", config, "schedule", "--once").exit_code == 0
    assert jobs_ran == ["refresh", "report"]


def test_alerts_on_a_cadence_of_their_own_are_not_checked_after_each_refresh(
    run_cli, tmp_path, clock, jobs_ran, monkeypatch
):
    from types import SimpleNamespace

    checks: list[str] = []
    checked = SimpleNamespace(deliveries=[])  # a check that sent nothing
    monkeypatch.setattr("planner.alerts.check.after_refresh", lambda *a: checks.append("alerts") or checked)
    rule = '[[alerts]]\nname = "cheap"\ngpu = "H20"\nbelow_cny_per_gpu_hour = 5\n'
    path = tmp_path / "alerts.toml"
    path.write_text(
        rule + f'[schedule]\nalerts = "nightly 09:00"\nlog_file = "{tmp_path / "job.log"}"\n',
        encoding="utf-8",
    )
    first = run_cli("--config", str(path), "schedule", "--once")  # Tuesday 02:05: prices, report due
    assert first.exit_code == 0, first.output
    assert jobs_ran == ["refresh", "report"]
    assert checks == ["alerts"]  # its first run (never ran: due), as a job of its own, not in the refresh
    assert "job: prices, then alerts, then report" in first.stderr
    clock.now = TUESDAY.replace(hour=9, minute=1)
    later = run_cli("--config", str(path), "schedule", "--once")
    assert later.exit_code == 0 and checks == ["alerts", "alerts"] and jobs_ran == ["refresh", "report"]


# ---- the long-running scheduler -----------------------------------------------------------------------


def test_the_long_running_scheduler_wakes_for_the_weekly_report(tmp_path):
    found = cadences(config_with(tmp_path, 'report = "weekly mon"'))
    groups = {name: trigger for _, name, trigger in timed_groups(found, "Asia/Shanghai")}
    assert set(groups) == {"prices", "report"}
    assert next_runs(groups["report"], 3, TUESDAY) == [
        dt.datetime(2026, 12, 7, 2, 0, tzinfo=SHANGHAI),
        dt.datetime(2026, 12, 14, 2, 0, tzinfo=SHANGHAI),
        dt.datetime(2026, 12, 21, 2, 0, tzinfo=SHANGHAI),
    ]
    assert next_runs(groups["prices"], 2, TUESDAY) == [
        dt.datetime(2026, 12, 2, 2, 0, tzinfo=SHANGHAI),
        dt.datetime(2026, 12, 3, 2, 0, tzinfo=SHANGHAI),
    ]


def test_the_long_running_scheduler_runs_jobs_due_together_once(tmp_path, clock, jobs_ran, db_url):
    """At Monday 02:00 both triggers fire; the first runs the refresh then the report, the second
    finds nothing left to do."""
    from planner.app import App
    from planner.ops.scheduler import run_due

    app = App(config_file=weekly_config(tmp_path), db_url=db_url)
    clock.now = dt.datetime(2026, 11, 30, 2, 0, 0, 300_000, tzinfo=SHANGHAI)  # a Monday, 02:00
    assert run_due(app, within_s=3600, say_skips=False) == 0
    assert run_due(app, within_s=3600, say_skips=False) == 0
    assert jobs_ran == ["refresh", "report"]
    clock.now = TUESDAY.replace(minute=0)
    assert run_due(app, within_s=3600, say_skips=False) == 0
    assert jobs_ran == ["refresh", "report", "refresh"]


def test_schedule_list_shows_each_job_and_when_they_run(run_cli, tmp_path):
    config = weekly_config(tmp_path, 'stock = "weekly sat 12:00"\n')
    listed = run_cli("--config", config, "schedule", "--list", "--count", "10")
    assert listed.exit_code == 0, listed.output
    assert "  report  weekly on Monday at 02:00" in listed.stdout
    mondays = [line for line in listed.stdout.splitlines() if line.endswith("prices, then report")]
    assert mondays and all(dt.datetime.fromisoformat(m.split()[0]).weekday() == 0 for m in mondays)
    doc = json.loads(run_cli("--config", config, "schedule", "--list", "--format", "json").stdout)
    report = next(job for job in doc["jobs"] if job["job"] == "report")
    assert report["cadence"] == "weekly mon" and report["setting"] == "[schedule] report"
    assert [dt.datetime.fromisoformat(t).strftime("%a %H:%M") for t in report["next_runs"]] == [
        "Mon 02:00"
    ] * 5
    assert all(run["jobs"] for run in doc["runs"]) and doc["next_runs"] == [run["at"] for run in doc["runs"]]
    table = run_cli("--config", config, "schedule", "--list", "--format", "csv").stdout.splitlines()
    assert table[0] == "next_run,jobs" and any(line.endswith(",stock") for line in table[1:])


def test_the_long_running_scheduler_holds_one_job_per_cadence(tmp_path):
    from planner.ops.scheduler import make_scheduler, next_run_text

    found = cadences(config_with(tmp_path, 'report = "weekly mon"\nstock = "1h"'))
    (first_id, first_name, first_trigger), *rest = timed_groups(found, "Asia/Shanghai")
    more = [(job_id, name, trigger, lambda: 0) for job_id, name, trigger in rest]
    scheduler, _ = make_scheduler(
        first_trigger, "Asia/Shanghai", 3600, lambda: 0, job_id=first_id, name=first_name, more=more
    )
    scheduler.start(paused=True)  # the times are set, nothing runs
    try:
        jobs = scheduler.get_jobs()
        assert {j.id: (j.max_instances, j.misfire_grace_time) for j in jobs} == {
            "prices": (1, 3600),
            "stock": (1, 3600),
            "report": (1, 3600),
        }
        report = next(j for j in jobs if j.id == "report")
        assert report.next_run_time.strftime("%a %H:%M") == "Mon 02:00"
        stock = next(j for j in jobs if j.id == "stock")
        assert next_run_text(jobs, "Asia/Shanghai").startswith(
            stock.next_run_time.strftime("%Y-%m-%d %H:%M Asia/Shanghai")
        )
    finally:
        scheduler.shutdown(wait=False)


def test_schedule_list_says_when_each_job_last_ran_and_what_is_due(run_cli, tmp_path, clock, jobs_ran):
    config = weekly_config(tmp_path)
    fresh = json.loads(run_cli("--config", config, "schedule", "--list", "--format", "json").stdout)
    assert {j["job"]: (j["last_run"], j["due_now"]) for j in fresh["jobs"]} == {
        "prices": (None, True),
        "stock": (None, False),
        "alerts": (None, False),
        "report": (None, True),
    }
    clock.now = dt.datetime(2026, 11, 30, 2, 5, tzinfo=SHANGHAI)  # Monday: both run
    assert run_cli("--config", config, "schedule", "--once").exit_code == 0
    clock.now = TUESDAY
    listed = run_cli("--config", config, "schedule", "--list")
    assert listed.exit_code == 0, listed.output
    lines = {line.split()[0]: line for line in listed.stdout.splitlines()[1:5]}
    assert lines["prices"] == "  prices  nightly at 02:00; last run Mon 2026-11-30 02:05: due now"
    assert lines["report"] == "  report  weekly on Monday at 02:00; last run Mon 2026-11-30 02:05"
    assert lines["stock"].rstrip().endswith("off") and lines["alerts"].rstrip().endswith("after each refresh")
    runs = [line for line in listed.stdout.splitlines() if line.startswith("  20")]
    assert runs[0] == "  2026-12-02 02:00 Asia/Shanghai (UTC+08:00)  prices"
