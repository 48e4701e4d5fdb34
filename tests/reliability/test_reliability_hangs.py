"""Resources and hangs: every network exchange has a wall-clock deadline and a size limit.

- A gzip bomb (a small compressed answer that decodes to hundreds of MB) fails that provider with a
  clear error after at most the cap, and ``--save-raw`` writes none of it.
- An HTTP server that drips its status line, headers or body is given up on at ``deadline_s``, one
  wall-clock deadline over the whole exchange.
- An SMTP server that keeps sending continuation lines, or answers one byte at a time, ends the
  attempt at its deadline instead of hanging ``report --email``.
- An SMTP server that takes the whole message and then says nothing gets it once, not three times.
- The scheduler abandons a run that outlives ``job_timeout_s`` (the next one runs on time), stops on
  one SIGTERM even with a hung job, and runs once on the night the clocks go back.

Only loopback servers are used. Each of these waits on the wall clock (a deadline, a cron second,
a 256 MB bomb) and is marked ``slow``; the fast group keeps the plain-login refusal and the
daylight-saving nights, and ``test_reliability_providers.py`` one gzip bomb through a whole refresh.
"""

from __future__ import annotations

import datetime as dt
import gzip
import os
import signal
import threading
import time
from collections.abc import Iterator
from email.message import EmailMessage
from zoneinfo import ZoneInfo

import pytest

from reports.mail import MailError, SmtpSettings, send
from scrapers.base import ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from tests.helpers.replay import make_config, outcome, refresh
from tests.helpers.servers import dripping_server, http_server
from tests.helpers.smtp import SmtpScript

BOMB_DECODED_BYTES = 256 * 2**20


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """256 MB of zeros, gzip-compressed to about 250 KB."""
    compressor = gzip.compress  # one call: zlib streams the zeros without holding them twice
    return compressor(bytes(BOMB_DECODED_BYTES), compresslevel=9)


@pytest.mark.slow
def test_gzip_bomb_is_refused_at_the_cap_not_decoded_whole(gzip_bomb):
    cap = 8 * 2**20
    with http_server(gzip_bomb, {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as base:
        client = HttpClient(
            "tencent", version="t", base_url=base, policy=HttpPolicy(max_retries=0, max_body_bytes=cap)
        )
        started = time.monotonic()
        with pytest.raises(ScrapeError) as caught:
            client.get("https://cvm.tencentcloudapi.com/prices")
    assert "more than 8 MB (decoded)" in str(caught.value) and "refused" in str(caught.value)  # the cap
    assert time.monotonic() - started < 10  # stopped at the cap, not after decoding 256 MB


@pytest.mark.slow
def test_gzip_bomb_fails_that_provider_and_save_raw_keeps_none_of_it(engine, tmp_path, gzip_bomb):
    saved = tmp_path / "saved"
    with http_server(gzip_bomb, {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as base:
        config = make_config(tmp_path, providers={"volcengine": {"base_url": base}})
        summary = refresh(engine, tmp_path, config, providers=["volcengine"], save_raw=saved)
    volcengine = outcome(summary, "volcengine")
    assert volcengine.status == "failed" and "(decoded): refused" in volcengine.error, volcengine.error
    written = sum(p.stat().st_size for p in saved.rglob("*") if p.is_file())
    assert written < 2**20  # the sidecars and the manifest, never the decoded bomb


@pytest.mark.slow
@pytest.mark.parametrize(
    "start",
    [
        b"HTTP/1.1 200 O",  # the status line, a byte at a time
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: ",  # a header
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n[",  # body
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[",  # a body ended by closing only
    ],
    ids=["status-line", "headers", "body", "body-without-length"],
)
def test_a_dripping_http_server_ends_at_one_deadline_over_the_whole_exchange(start):
    with dripping_server(start) as base:
        client = HttpClient(
            "tencent",
            version="t",
            base_url=base,
            policy=HttpPolicy(max_retries=2, read_timeout_s=5, deadline_s=1, min_interval_s=0),
        )
        started = time.monotonic()
        with pytest.raises(ScrapeError) as caught:
            client.get("https://cvm.tencentcloudapi.com/prices")
    assert "no whole answer within 1 s (connect, status line, headers and body)" in str(caught.value)
    assert time.monotonic() - started < 2  # one deadline, not retried: a server that drips drips again


@pytest.fixture
def smtp_script(request) -> Iterator[SmtpScript]:
    server = SmtpScript(request.param)
    yield server
    server.close()


def _message() -> EmailMessage:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "planner@localhost", "team@example.com", "prices"
    message.set_content("the report")
    return message


@pytest.mark.slow
@pytest.mark.parametrize("smtp_script", ["drip"], indirect=True)
def test_dripping_smtp_server_ends_at_the_deadline(smtp_script):
    settings = SmtpSettings("127.0.0.1", smtp_script.port, starttls=False, timeout_s=5, deadline_s=1.0)
    started = time.monotonic()
    with pytest.raises(MailError) as caught:
        send(_message(), settings, attempts=1)
    assert time.monotonic() - started < 5
    assert "did not finish answering within 1 s" in caught.value.message


@pytest.mark.slow
def test_an_smtp_server_dripping_its_tls_handshake_ends_at_the_deadline():
    """``ssl = true``: the server starts a handshake record of 16 KB and sends it a byte at a time, each
    well inside the socket's timeout; the handshake is bounded as a whole (the socket's timeout, cut to
    what is left of the attempt's deadline, is one deadline for all of it in CPython's ssl)."""
    with dripping_server(b"\x16\x03\x03\x40\x00", every_s=0.05) as base:
        port = int(base.rsplit(":", 1)[1])
        settings = SmtpSettings("127.0.0.1", port, starttls=False, ssl=True, timeout_s=5, deadline_s=1.0)
        started = time.monotonic()
        with pytest.raises(MailError) as caught:
            send(_message(), settings, attempts=1)
    assert time.monotonic() - started < 3
    assert "timed out" in caught.value.message and not caught.value.permanent, caught.value.message


@pytest.mark.slow
@pytest.mark.parametrize("smtp_script", ["drip"], indirect=True)
def test_dripping_smtp_server_does_not_hang_report_email(run_cli, tmp_path, smtp_script, monkeypatch):
    from tests.helpers.smtp import email_config

    monkeypatch.setattr("reports.mail.pause", lambda s: None)
    config = email_config(tmp_path, smtp_script.port, deadline_s=1.0)
    started = time.monotonic()
    result = run_cli(
        "--config", str(config), "report", "--email", "team@example.com", "--out", str(tmp_path / "o")
    )
    assert result.exit_code != 0 and "did not finish answering within 1 s" in result.stderr, result.output
    assert time.monotonic() - started < 20  # three attempts of 1 s each, not forever
    assert "Traceback" not in result.output


@pytest.mark.slow
@pytest.mark.parametrize("smtp_script", ["silent_after_data"], indirect=True)
def test_silent_smtp_server_after_data_gets_the_message_once(smtp_script):
    settings = SmtpSettings("127.0.0.1", smtp_script.port, starttls=False, timeout_s=1.0, deadline_s=5)
    with pytest.raises(MailError) as caught:
        send(_message(), settings, attempts=3, sleep=lambda s: None)
    assert smtp_script.messages == 1
    assert caught.value.permanent and "did not confirm" in caught.value.message
    assert "may have been delivered" in caught.value.hint


def test_plain_smtp_login_is_refused_without_tls_or_opt_in(run_cli, tmp_path, monkeypatch):
    from tests.helpers.smtp import email_config

    monkeypatch.setenv("PLANNER_SMTP_PASSWORD", "Smtp-Pa55word-9f3K2q")
    config = email_config(tmp_path, 2525, username="planner")
    result = run_cli(
        "--config", str(config), "report", "--email", "team@example.com", "--out", str(tmp_path / "o")
    )
    assert result.exit_code == 2, result.output
    assert "neither starttls nor ssl is on" in result.stderr and "allow_plain_login" in result.stderr
    assert not (tmp_path / "o").exists()  # refused before anything was written
    with pytest.raises(MailError) as caught:  # the library refuses too, whoever calls it
        send(
            _message(),
            SmtpSettings("127.0.0.1", 2525, starttls=False, username="u", password="Pa55-word-long"),
        )
    assert caught.value.permanent and "unencrypted" in caught.value.message


@pytest.mark.slow
def test_scheduler_job_timeout_lets_the_next_run_start():
    from apscheduler.triggers.cron import CronTrigger

    from planner.ops.scheduler import make_scheduler

    started: list[float] = []
    hang = threading.Event()

    def job() -> None:
        started.append(time.monotonic())
        if len(started) == 1:
            hang.wait(60)  # the first run hangs

    scheduler, _ = make_scheduler(CronTrigger(second="*", timezone=ZoneInfo("UTC")), "UTC", 60, job, 1.0)
    scheduler.start()
    try:
        deadline = time.monotonic() + 15
        while len(started) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        hang.set()
        scheduler.shutdown(wait=False)
    assert len(started) >= 2, "the hung run made the next one skip"


@pytest.mark.slow
def test_scheduler_stops_on_one_sigterm_with_a_hung_job():
    from apscheduler.triggers.cron import CronTrigger

    from planner.ops.scheduler import run_scheduler

    started: list[float] = []
    hang = threading.Event()

    def job() -> None:
        started.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGTERM)  # once, while the job hangs
        hang.wait(120)

    watchdog = threading.Timer(30, hang.set)
    watchdog.start()
    begun = time.monotonic()
    try:
        run_scheduler(
            CronTrigger(second="*", timezone=ZoneInfo("UTC")), "UTC", 60, job, poll_s=0.05, stop_wait_s=0.5
        )
    finally:
        watchdog.cancel()
        hang.set()
    assert started and time.monotonic() - begun < 10


@pytest.mark.parametrize(
    "zone_name, cron, night",
    [
        ("America/New_York", "30 1 * * *", dt.datetime(2026, 10, 31, 12)),
        ("Europe/Berlin", "15 2 * * *", dt.datetime(2026, 10, 24, 12)),
    ],
)
def test_daylight_saving_fall_back_night_runs_once(zone_name, cron, night):
    from planner.ops.scheduler import crontab_trigger, next_runs

    zone = ZoneInfo(zone_name)
    runs = next_runs(crontab_trigger(cron, zone_name), 3, night.replace(tzinfo=zone))
    days = [r.astimezone(zone).date() for r in runs]
    assert len(set(days)) == 3, runs  # three runs on three nights, not two on the fall-back one
    hourly = next_runs(crontab_trigger("0 * * * *", zone_name), 30, night.replace(tzinfo=zone))
    walls = [r.astimezone(zone).replace(tzinfo=None) for r in hourly]
    assert len(walls) == len(set(walls)) and walls == sorted(walls)
