"""``planner schedule``: cron in a time zone, the job (refresh then report), the refresh lock on SQLite
and PostgreSQL, and a clean stop on SIGTERM."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from db.schema import scrape_runs
from planner.ingest.lock import EXIT_LOCK_BUSY, LockBusy, refresh_lock
from planner.ops.scheduler import crontab_trigger, crontab_weekdays, make_scheduler, next_runs
from planner.output import format_run
from tests.conftest import price_row, write_csv
from tests.helpers.db_checks import stored_by_provider
from tests.helpers.replay import EXPECTED_STORED_BY_DEFAULT, OFF_BY_DEFAULT, replay_copy
from tests.helpers.schedule import fake_refresh, schedule_config
from tests.helpers.smtp import Recorder, smtp_server

ROOT = Path(__file__).resolve().parents[2]
SHANGHAI = ZoneInfo("Asia/Shanghai")


# ---- when it runs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (dt.datetime(2026, 11, 30, 10, 0, tzinfo=SHANGHAI), dt.datetime(2026, 12, 1, 2, 0, tzinfo=SHANGHAI)),
        (dt.datetime(2026, 11, 30, 1, 59, tzinfo=SHANGHAI), dt.datetime(2026, 11, 30, 2, 0, tzinfo=SHANGHAI)),
        # 17:59 UTC is 01:59 in Shanghai: the next run is one minute later, not 02:00 UTC
        (dt.datetime(2026, 11, 30, 17, 59, tzinfo=dt.UTC), dt.datetime(2026, 12, 1, 2, 0, tzinfo=SHANGHAI)),
    ],
)
def test_the_default_schedule_is_0200_in_shanghai(now, expected):
    runs = next_runs(crontab_trigger("0 2 * * *", "Asia/Shanghai"), 3, now)
    assert runs[0] == expected and runs[0].utcoffset() == dt.timedelta(hours=8)
    assert [r - runs[0] for r in runs] == [dt.timedelta(days=d) for d in range(3)]
    assert format_run(runs[0], "Asia/Shanghai") == f"{expected:%Y-%m-%d} 02:00 Asia/Shanghai (UTC+08:00)"


def test_schedule_list_with_the_defaults(run_cli):
    result = run_cli("schedule", "--list")
    assert result.exit_code == 0, result.output
    runs = [line.strip() for line in result.stdout.splitlines() if line.startswith("  20")]
    assert len(runs) == 5
    pattern = r"\d{4}-\d\d-\d\d 02:00 Asia/Shanghai \(UTC\+08:00\)  prices, then report"
    assert all(re.fullmatch(pattern, r) for r in runs), runs
    jobs = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[1:5]}
    assert jobs == {
        "prices": "nightly at 02:00; never ran: due now",  # a fresh install: --once would run it
        "stock": "off",
        "alerts": "after each refresh",
        "report": "nightly at 02:00; never ran: due now",
    }
    assert result.stdout.startswith("Jobs, in Asia/Shanghai:")
    doc = json.loads(run_cli("schedule", "--list", "--count", "2", "--format", "json").stdout)
    first = dt.datetime.fromisoformat(doc["next_runs"][0])
    assert doc["timezone"] == "Asia/Shanghai" and doc["next_runs"][0].endswith("T02:00:00+08:00")
    assert dt.timedelta(0) < first - dt.datetime.now(dt.UTC) <= dt.timedelta(days=1)
    assert len(doc["next_runs"]) == 2


@pytest.mark.parametrize(
    ("field", "days"),
    [
        ("*", "*"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("0", "sun"),
        ("7", "sun"),
        ("0,6", "sun,sat"),
        ("sat,sun", "sun,sat"),
        ("*/2", "sun,tue,thu,sat"),
        ("fri-sun", "sun,fri,sat"),
        ("5-7", "sun,fri,sat"),
        ("MON", "mon"),
    ],
)
def test_weekdays_are_read_the_way_cron_reads_them(field, days):
    assert crontab_weekdays(field) == days


def test_a_weekday_schedule_runs_on_the_right_day():
    sunday = dt.datetime(2026, 11, 29, 12, 0, tzinfo=SHANGHAI)
    (run,) = next_runs(crontab_trigger("30 6 * * 1", "Asia/Shanghai"), 1, sunday)
    assert run == dt.datetime(2026, 11, 30, 6, 30, tzinfo=SHANGHAI) and run.strftime("%a") == "Mon"


@pytest.mark.parametrize(
    ("setting", "fragment", "hint"),
    [
        ('cron = "0 2 * *"', "has 4 field(s), not 5", "minute hour day month weekday"),
        ('cron = "0 25 * * *"', "is not valid", "minute hour day month weekday"),
        ('cron = "0 2 * * 8"', "bad weekday '8'", "minute hour day month weekday"),
        ('timezone = "Asia/Shangai"', "not a known time zone", "Asia/Shanghai"),
    ],
)
def test_schedule_mistakes_are_one_line_errors(run_cli, tmp_path, setting, fragment, hint):
    config = tmp_path / "bad.toml"
    config.write_text(f"[schedule]\n{setting}\n")
    result = run_cli("--config", str(config), "schedule", "--list")
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and hint in result.stderr and "Traceback" not in result.output


# ---- the lock ---------------------------------------------------------------------------------------


def test_a_second_lock_holder_is_refused_and_told_who_holds_it(engine):
    with refresh_lock(engine, holder="nightly scheduler"):
        with pytest.raises(LockBusy) as caught, refresh_lock(engine, holder="planner refresh"):
            pass
        assert "another refresh is running" in caught.value.message
        assert "nightly scheduler" in caught.value.message and str(os.getpid()) in caught.value.message
        assert caught.value.exit_code == EXIT_LOCK_BUSY
    with refresh_lock(engine, holder="planner refresh"):  # released: the next one gets it
        pass


def test_a_waiting_holder_gets_the_lock_when_it_is_released(engine):
    released = threading.Event()

    def hold() -> None:
        with refresh_lock(engine, holder="first"):
            started.set()
            time.sleep(0.2)
            # set while still holding: set after the block, it raced the waiter, which can take the
            # lock the moment it is released and look before this thread runs again
            released.set()

    started = threading.Event()
    thread = threading.Thread(target=hold)
    thread.start()
    started.wait(5)
    # the poll between tries, shortened from half a second: the wait itself is what is tested
    with refresh_lock(engine, holder="second", wait_s=10, sleep=lambda _s: time.sleep(0.02)):
        assert released.is_set()
    thread.join()


HOLD_LOCK = """
import sys
from db.engine import make_engine
from planner.ingest.lock import refresh_lock
with refresh_lock(make_engine(sys.argv[1]), holder="other scheduler"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_schedule_once_skips_and_says_so_while_another_process_refreshes(
    run_cli, db_url, tmp_path, monkeypatch
):
    calls: list[str] = []
    monkeypatch.setattr("planner.ops.scheduler.refresh_step", fake_refresh(tmp_path / "none.csv", calls))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, db_url],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        result = run_cli("--config", str(schedule_config(tmp_path)), "schedule", "--once")
    finally:
        holder.stdin.close()
        holder.wait(10)
    assert result.exit_code == EXIT_LOCK_BUSY, result.output
    # SQLite's lock file names the holder; on PostgreSQL its session is named after it
    busy = next(line for line in result.stderr.splitlines() if "another refresh is running" in line)
    assert "(other scheduler" in busy and re.search(rf"\bpid {holder.pid}\b", busy), busy  # the holder
    assert "skipping this run" in result.stderr
    assert calls == [] and not (tmp_path / "reports").exists()
    assert "skipping this run" in (tmp_path / "job.log").read_text()


# ---- the job ----------------------------------------------------------------------------------------


def test_the_job_replays_a_recorded_refresh_stores_it_then_reports_by_email(db_url, tmp_path, monkeypatch):
    """The nightly job with the real refresh step on the recorded replay (the ``planner refresh
    --from-raw`` path, no network): the prices are stored, each provider's run is recorded, and the
    report is written and e-mailed."""
    from planner.app import App
    from planner.ops.scheduler import log_path, logging_to, refresh_step, run_job

    monkeypatch.chdir(tmp_path)  # no ./config.toml but the test's
    handler = Recorder()
    with smtp_server(handler) as port:
        config = schedule_config(
            tmp_path, smtp_host="127.0.0.1", smtp_port=port, starttls=False, recipients=["ml@example.com"]
        )
        text = config.read_text(encoding="utf-8").replace("[report]\n", "[report]\nchart = false\n")
        # No politeness pause between replayed requests; the chart (seconds of matplotlib) is
        # test_report_chart's.
        text += "".join(f"[providers.{name}]\nmin_interval_s = 0\n" for name in EXPECTED_STORED_BY_DEFAULT)
        config.write_text(text, encoding="utf-8")
        app = App(config_file=str(config), db_url=db_url)
        with logging_to(log_path(app.config), "Asia/Shanghai"):  # as `planner schedule` runs the job
            code = run_job(app, refresh=partial(refresh_step, from_raw=replay_copy(tmp_path)))
    engine = app.engine()
    try:
        assert code == 0
        assert stored_by_provider(engine) == EXPECTED_STORED_BY_DEFAULT
        with engine.connect() as conn:
            runs = conn.execute(
                select(scrape_runs.c.provider, scrape_runs.c.status, scrape_runs.c.prices_stored).where(
                    scrape_runs.c.kind == "refresh"
                )
            ).all()
            jobs = conn.execute(
                select(scrape_runs.c.kind, scrape_runs.c.status).where(scrape_runs.c.provider == "schedule")
            ).all()
    finally:
        engine.dispose()
    assert {provider: (status, stored) for provider, status, stored in runs} == {
        **{p: ("ok", n) for p, n in EXPECTED_STORED_BY_DEFAULT.items()},
        **{p: ("skipped", 0) for p in OFF_BY_DEFAULT},
    }
    assert sorted(jobs) == [("prices", "ok"), ("report", "ok")]  # what the next --once reads
    files = sorted((tmp_path / "reports").glob("*.csv"))
    assert len(files) == 5
    assert len(handler.messages) == 1 and handler.messages[0][1] == ["ml@example.com"]
    log = (tmp_path / "job.log").read_text()
    stored = EXPECTED_STORED_BY_DEFAULT["tencent"]
    assert "tencent ok (" in log and f", {stored} stored, " in log, log
    assert "report: sent to ml@example.com" in log
    assert "job finished with exit code 0" in log


def test_a_failed_provider_still_reports_and_the_exit_code_says_so(run_cli, tmp_path, monkeypatch):
    prices = write_csv(tmp_path / "today.csv", [price_row()])
    monkeypatch.setattr("planner.ops.scheduler.refresh_step", fake_refresh(prices, [], failed=True))
    result = run_cli("--config", str(schedule_config(tmp_path)), "schedule", "--once")
    assert result.exit_code == 1
    failed = next(line for line in result.stderr.splitlines() if "refresh aliyun failed" in line)
    assert "HTTP 503" in failed and "ecs.aliyuncs.com" in failed
    assert "recipients is empty" in result.stderr and "the report only" in result.stderr
    assert len(list((tmp_path / "reports").glob("*.csv"))) == 5


def test_smtp_down_during_the_job_keeps_the_report_and_fails(run_cli, tmp_path, monkeypatch):
    from tests.helpers.smtp import free_port

    monkeypatch.setattr("reports.mail.pause", lambda s: None)
    prices = write_csv(tmp_path / "today.csv", [price_row()])
    monkeypatch.setattr("planner.ops.scheduler.refresh_step", fake_refresh(prices, []))
    config = schedule_config(
        tmp_path, smtp_host="127.0.0.1", smtp_port=free_port(), starttls=False, recipients=["a@x.org"]
    )
    result = run_cli("--config", str(config), "schedule", "--once")
    assert result.exit_code == 1
    assert "e-mail attempt 2 failed" in result.stderr and "not sent" in result.stderr
    assert len(list((tmp_path / "reports").glob("*.csv"))) == 5


def test_the_scheduler_runs_one_at_a_time_coalesces_and_has_a_grace_period():
    from apscheduler.triggers.cron import CronTrigger

    scheduler, job = make_scheduler(CronTrigger(hour=2, timezone=SHANGHAI), "Asia/Shanghai", 3600, lambda: 0)
    assert (job.coalesce, job.max_instances, job.misfire_grace_time) == (True, 1, 3600)
    assert scheduler.timezone == SHANGHAI


@pytest.mark.slow  # waits for a cron second on the wall clock
def test_the_scheduler_runs_the_job_and_stops_cleanly_on_sigterm():
    from apscheduler.triggers.cron import CronTrigger

    from planner.ops.scheduler import run_scheduler

    ran: list[float] = []

    def job() -> None:
        ran.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)  # still running when the signal arrives: it finishes first
        ran.append(time.monotonic())

    before = signal.getsignal(signal.SIGTERM)
    # A watchdog: if the job never runs, stop the scheduler so the test fails instead of hanging.
    watchdog = threading.Timer(20, lambda: ran or os.kill(os.getpid(), signal.SIGTERM))
    watchdog.start()
    try:
        run_scheduler(CronTrigger(second="*", timezone=SHANGHAI), "Asia/Shanghai", 60, job)
    finally:
        watchdog.cancel()
    assert len(ran) == 2
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.slow  # a real planner process and a signal
def test_planner_schedule_in_the_foreground_exits_cleanly_on_sigterm(tmp_path):
    env = {**os.environ, "PLANNER_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}
    env.pop("PLANNER_CONFIG", None)
    log = tmp_path / "data" / "planner.log"
    command = [sys.executable, "-m", "planner", "--db", f"sqlite:///{tmp_path / 'p.db'}", "schedule"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (log.exists() and "next run:" in log.read_text()):
            time.sleep(0.05)
        assert log.exists() and "next run:" in log.read_text()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, stderr.decode()
    text = log.read_text()
    assert "02:00 Asia/Shanghai (UTC+08:00)" in text
    assert "SIGTERM: stopping" in text and "scheduler stopped" in text


# ---- with the real refresh pipeline -----------------------------------------------------------------


def test_schedule_once_runs_the_real_refresh_then_the_report(run_cli, tmp_path):
    """planner.ingest.refresh.run_refresh with every provider disabled (no network): four skipped runs, which
    the report's health file then shows."""
    from planner.providers import PROVIDERS

    config = schedule_config(tmp_path)
    with config.open("a") as fh:
        fh.writelines(f"[providers.{name}]\nenabled = false\n" for name in PROVIDERS)
    result = run_cli("--config", str(config), "schedule", "--once")
    assert result.exit_code == 0, result.output
    (health,) = (tmp_path / "reports").glob("*_health.csv")
    rows = list(csv.DictReader(io.StringIO(health.read_text(encoding="utf-8-sig"))))
    assert {r["provider"]: r["status"] for r in rows} == dict.fromkeys(PROVIDERS, "skipped")
    log = (tmp_path / "job.log").read_text()
    assert all(f"{name} skipped (0 offers" in log for name in PROVIDERS), log
    assert "job finished with exit code 0" in log


def test_planner_refresh_is_refused_while_the_scheduler_holds_the_lock(run_cli, engine, tmp_path):
    """A person running `planner refresh` during the nightly job is told, and nothing runs twice."""
    with refresh_lock(engine, holder="planner schedule"):
        result = run_cli("refresh")
    assert result.exit_code == EXIT_LOCK_BUSY, result.output
    assert "another refresh is running" in result.stderr and "(planner schedule" in result.stderr


def test_an_email_settings_mistake_in_the_job_still_writes_the_report(run_cli, tmp_path, monkeypatch):
    prices = write_csv(tmp_path / "today.csv", [price_row()])
    monkeypatch.setattr("planner.ops.scheduler.refresh_step", fake_refresh(prices, []))
    config = schedule_config(tmp_path, ssl=True, starttls=True, recipients=["a@x.org"])
    result = run_cli("--config", str(config), "schedule", "--once")
    assert result.exit_code == 1
    assert "not sent" in result.stderr and "ssl and starttls are both true" in result.stderr
    assert len(list((tmp_path / "reports").glob("*.csv"))) == 5


def test_schedule_log_holds_only_its_own_lines_in_its_time_zone(tmp_path):
    import logging

    from planner.ops.scheduler import log, logging_to

    path = tmp_path / "planner.log"
    with logging_to(path, "Asia/Shanghai"):
        log.info("job started")
        logging.getLogger("apscheduler.scheduler").info("Added job 'refresh and report'")
        logging.getLogger("matplotlib.font_manager").info("generated new fontManager")
        logging.getLogger("apscheduler.executors").warning("Run time of job was missed")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == ["job started", "Run time of job was missed"]
    assert all(" INFO " in line or " WARNING " in line for line in lines)
    assert all(line.split()[1].endswith("+0800") for line in lines), lines
    assert logging.getLogger("apscheduler").level == logging.NOTSET  # restored after the block
