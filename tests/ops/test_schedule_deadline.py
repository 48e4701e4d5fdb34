"""The nightly job against a server that drips its status line (``HTTP/1.1 200 O``, then a byte at a
time): every exchange has one wall-clock deadline, so the refresh ends, the refresh lock is let go and
the next night runs; and a run the scheduler abandons has its exchanges cut, so it ends and lets go of
the lock too, instead of skipping every later night behind it ("another refresh is running (planner
schedule, pid <its own>)")."""

from __future__ import annotations

import time
from zoneinfo import ZoneInfo

import pytest

from planner.providers import PROVIDERS
from tests.helpers.schedule import schedule_config
from tests.helpers.servers import dripping_server


def _nights(tmp_path, monkeypatch, deadline_s: float, job_timeout_s: float, nights: int = 2) -> str:
    """Run ``planner schedule``'s scheduler with the real job every 2 s (a "night") until ``nights``
    jobs finished (or 40 s); Aliyun's price file comes from a dripping server. Returns the log."""
    from apscheduler.triggers.cron import CronTrigger

    from planner.app import App
    from planner.ops.scheduler import log_path, logging_to, make_scheduler, run_job

    monkeypatch.chdir(tmp_path)
    with dripping_server() as base:
        config = schedule_config(tmp_path)
        with config.open("a") as fh:
            fh.write(f"[http]\nretries = 0\ndeadline_s = {deadline_s}\n")
            fh.writelines(f"[providers.{name}]\nenabled = false\n" for name in PROVIDERS if name != "aliyun")
            fh.write(f'[providers.aliyun]\nbase_url = "{base}"\nmin_interval_s = 0\n')
        text = config.read_text(encoding="utf-8").replace(
            "[schedule]\n", f"[schedule]\nemail = false\njob_timeout_s = {job_timeout_s}\n"
        )
        config.write_text(text, encoding="utf-8")
        app = App(config_file=str(config), db_url=f"sqlite:///{tmp_path / 'p.db'}")
        log_file = log_path(app.config)
        with logging_to(log_file, "UTC"):
            scheduler, _ = make_scheduler(
                CronTrigger(second="*/2", timezone=ZoneInfo("UTC")),
                "UTC",
                60,
                lambda: run_job(app),
                job_timeout_s=job_timeout_s,
            )
            scheduler.start()
            try:
                ends = time.monotonic() + 40
                while time.monotonic() < ends:
                    log = log_file.read_text(encoding="utf-8")
                    if log.count("job finished with exit code") + log.count("skipping this run") >= nights:
                        break
                    time.sleep(0.2)
            finally:
                scheduler.shutdown(wait=False)
    return log_file.read_text(encoding="utf-8")


@pytest.mark.slow  # two scheduled nights on the wall clock
def test_a_dripping_status_line_ends_at_the_deadline_and_the_next_night_runs(tmp_path, monkeypatch):
    log = _nights(tmp_path, monkeypatch, deadline_s=1, job_timeout_s=60)
    assert "another refresh is running" not in log and "skipping this run" not in log, log
    assert log.count("job finished with exit code 1") >= 2, log  # aliyun failed both nights, said why
    assert "no whole answer within 1 s (connect, status line, headers and body)" in log, log


@pytest.mark.slow  # two scheduled nights on the wall clock
def test_an_abandoned_run_has_its_exchanges_cut_and_lets_go_of_the_lock(tmp_path, monkeypatch):
    log = _nights(tmp_path, monkeypatch, deadline_s=300, job_timeout_s=2)
    assert "abandoned" in log and "let go of the refresh lock" in log, log
    assert "skipping this run" not in log, log
    assert log.count("job finished with exit code 1") >= 2, log
    assert "the job it ran for was abandoned" in log, log


def test_a_run_skipped_behind_its_own_abandoned_run_says_so(tmp_path, monkeypatch, caplog):
    """The lock held by this very process (an abandoned run still ending) is not "another refresh"."""
    from planner.app import App
    from planner.ingest.lock import EXIT_LOCK_BUSY, refresh_lock
    from planner.ops.scheduler import run_job

    monkeypatch.chdir(tmp_path)
    app = App(config_file=str(schedule_config(tmp_path)), db_url=f"sqlite:///{tmp_path / 'p.db'}")
    with refresh_lock(app.engine(), holder="planner schedule"), caplog.at_level("WARNING"):
        code = run_job(app, refresh=lambda app: pytest.fail("refreshed under a held lock"))
    assert code == EXIT_LOCK_BUSY
    assert (
        "an earlier run of this scheduler, abandoned and still ending, holds the refresh lock" in caplog.text
    )
    assert "another refresh is running" not in caplog.text
