"""Refreshes while many readers read, and two schedulers started at once, on SQLite and PostgreSQL.

- Real ``planner refresh`` processes write night after night while reader threads (the queries behind
  ``quote`` and ``prices``, and the report) and reader processes (``planner prices``, ``quote`` and
  ``report``) read as fast as they can: no reader ever fails ("database is locked" or anything else)
  and no reader ever sees a provider's night half stored (some of its instances at tonight's price,
  others still at yesterday's).
- Two ``planner schedule --once`` started together: one runs the job, the other says who holds the
  refresh lock and skips (exit 75); the night is refreshed and reported exactly once.
- The report reads all its tables in one consistent view: a refresh committing between two of its
  queries must not give a report whose files disagree.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from sqlalchemy import event, func, select

from db.engine import make_engine
from db.queries import latest_prices
from db.schema import scrape_runs
from tests.helpers.db_checks import assert_intact, stored
from tests.helpers.db_edits import age
from tests.helpers.replay import RAW, make_config, refresh
from tests.helpers.servers import FaultServer

ROUNDS = int(os.environ.get("PLANNER_FAULT_ROUNDS", "4"))


def planner_cli(db_url: str, workdir: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PLANNER_DATA_DIR": str(workdir / "data"), "HOME": str(workdir), **env}
    environment.pop("PLANNER_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "planner", "--db", db_url, *args],
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def days_by_provider(rows: list[tuple[str, dt.date]]) -> dict[str, set[dt.date]]:
    days: dict[str, set[dt.date]] = defaultdict(set)
    for provider, day in rows:
        days[provider].add(day)
    return days


class Readers:
    """Reader threads and processes that run until ``stop``; what they saw is kept."""

    def __init__(self, db_url: str, workdir: Path):
        self.db_url, self.workdir = db_url, workdir
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.torn: list[str] = []
        self.reads: dict[str, int] = defaultdict(int)
        self.states: set[tuple[str, dt.date]] = set()  # (provider, day) states seen
        self.threads: list[threading.Thread] = []

    def check(self, who: str, rows: list[tuple[str, dt.date]]) -> None:
        for provider, days in days_by_provider(rows).items():
            if len(days) > 1:
                self.torn.append(f"{who} saw {provider} on {sorted(days)}")
            self.states |= {(provider, d) for d in days}
        self.reads[who] += 1

    def query_loop(self, who: str) -> None:
        engine = make_engine(self.db_url)
        try:
            while not self.stop.is_set():
                try:
                    with engine.connect() as conn:
                        found = latest_prices(conn)
                    self.check(who, [(p.provider, p.observed_at.date()) for p in found])
                except Exception as err:  # noqa: BLE001 - any failure of a reader is the finding
                    self.errors.append(f"{who}: {type(err).__name__}: {err}")
        finally:
            engine.dispose()

    def report_loop(self, who: str) -> None:
        from reports.build import build_report

        engine = make_engine(self.db_url)
        try:
            while not self.stop.is_set():
                try:
                    report = build_report(engine, dt.date.today())
                    table = report.tables["prices"]
                    days = [
                        (p, dt.date.fromisoformat(str(d)[:10]))
                        for p, d in zip(table["provider"], table["observed_at_utc"], strict=True)
                    ]
                    self.check(who, days)
                except Exception as err:  # noqa: BLE001
                    self.errors.append(f"{who}: {type(err).__name__}: {err}")
        finally:
            engine.dispose()

    def cli_loop(self, who: str, args: list[str]) -> None:
        while not self.stop.is_set():
            done = planner_cli(self.db_url, self.workdir, *args)
            if done.returncode != 0 or "locked" in done.stderr:
                self.errors.append(f"{who}: exit {done.returncode}: {done.stderr.strip()[:300]}")
                continue
            if "--format" in args and args[0] in ("prices", "quote"):
                doc = json.loads(done.stdout)
                options = doc if args[0] == "prices" else doc["options"]
                self.check(
                    who, [(o["provider"], dt.date.fromisoformat(o["observed_at"][:10])) for o in options]
                )
            else:
                self.reads[who] += 1

    def start(self) -> None:
        targets = [(self.query_loop, (f"query-{i}",)) for i in range(6)]
        targets += [(self.report_loop, ("report-thread",))]
        targets += [
            (self.cli_loop, ("planner prices", ["prices", "--format", "json"])),
            (
                self.cli_loop,
                (
                    "planner quote",
                    ["quote", "--gpu", "A100", "--hours", "100", "--top", "200", "--format", "json"],
                ),
            ),
            (
                self.cli_loop,
                ("planner report", ["report", "--out", str(self.workdir / "reports"), "--format", "json"]),
            ),
        ]
        for target, args in targets:
            thread = threading.Thread(target=target, args=args, daemon=True)
            thread.start()
            self.threads.append(thread)

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)


@pytest.mark.slow
def test_refreshes_and_many_readers_no_lock_errors_and_no_torn_reads(db_url, engine, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    assert refresh(engine, tmp_path, from_raw=RAW).exit_code == 0
    readers = Readers(db_url, workdir)
    readers.start()
    refreshed: list[subprocess.CompletedProcess] = []
    try:
        time.sleep(1.0)  # the readers are reading yesterday's night
        for _ in range(ROUNDS):
            before = stored(engine)
            age(engine)  # a night passes (a write of its own, beside the readers)
            refreshed.append(planner_cli(db_url, workdir, "refresh", "--from-raw", str(RAW)))
            assert_intact(
                engine, db_url, {(*r[:4], r[4] - dt.timedelta(days=1), r[5]) for r in before}, "refresh"
            )
            time.sleep(0.3)
    finally:
        readers.finish()
    for done in refreshed:
        assert done.returncode == 0 and "locked" not in done.stderr, done.stderr
    assert not readers.errors, readers.errors[:5]
    assert not readers.torn, readers.torn[:5]
    assert min(readers.reads.values()) >= 2, dict(readers.reads)
    assert sum(readers.reads.values()) >= 100, dict(readers.reads)
    per_provider = days_by_provider(sorted(readers.states))
    assert all(len(days) >= 2 for days in per_provider.values()), (
        "the reads never overlapped a night's writes"
    )


@pytest.mark.slow
def test_two_schedulers_started_at_once_one_runs_the_other_skips_and_says_so(db_url, engine, tmp_path):
    with FaultServer("tencent", "slow", delay_s=1.0) as server:  # a night that takes a few seconds
        processes = []
        for name in ("first", "second"):
            workdir = tmp_path / name
            workdir.mkdir()
            config = workdir / "config.toml"
            config.write_text(
                "[schedule]\nemail = false\n"
                f"log_file = '{workdir / 'planner.log'}'\n"
                f"[report]\nout_dir = '{tmp_path / 'reports'}'\n"
                "[http]\nretries = 0\n"
                f"[providers.tencent]\nbase_url = '{server.base_url}'\nmin_interval_s = 0.0\n"
                + "".join(f"[providers.{p}]\nenabled = false\n" for p in ("aliyun", "volcengine", "autodl")),
                encoding="utf-8",
            )
            env = {**os.environ, "PLANNER_DATA_DIR": str(tmp_path / "data"), "HOME": str(workdir)}
            env.pop("PLANNER_DATABASE_URL", None)
            processes.append(
                (
                    workdir,
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "planner",
                            "--db",
                            db_url,
                            "--config",
                            str(config),
                            "schedule",
                            "--once",
                        ],
                        cwd=workdir,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    ),
                )
            )
        outcomes = []
        for workdir, process in processes:
            out, err = process.communicate(timeout=300)
            outcomes.append((process.returncode, process.pid, err, (workdir / "planner.log").read_text()))
    assert sorted(code for code, *_ in outcomes) == [0, 75], [(c, e[-500:]) for c, _, e, _ in outcomes]
    (_, ran_pid, _, ran_log), (_, _, skip_err, skip_log) = sorted(outcomes, key=lambda o: o[0])
    for text in (skip_err, skip_log):
        busy = next(line for line in text.splitlines() if "another refresh is running" in line)
        assert "(planner schedule" in busy and re.search(rf"\bpid {ran_pid}\b", busy), busy  # the holder
        assert "skipping this run" in text
    assert "job finished with exit code 0" in ran_log and "tencent ok" in ran_log
    with engine.connect() as conn:
        runs = conn.execute(
            select(scrape_runs.c.provider, scrape_runs.c.status, func.count()).group_by(
                scrape_runs.c.provider, scrape_runs.c.status
            )
        ).all()
    assert sorted(runs) == [
        ("aliyun", "skipped", 1),
        ("autodl", "skipped", 1),
        ("compshare", "skipped", 1),
        ("ppio", "skipped", 1),
        # the jobs' records: one process ran prices and report, the other's prices found the lock held
        ("schedule", "ok", 2),
        ("schedule", "skipped", 1),
        ("tencent", "ok", 1),
        ("volcengine", "skipped", 1),
    ]
    assert len(list((tmp_path / "reports").glob("*.csv"))) == 5  # reported once (the same five files)


def test_a_refresh_committing_in_the_middle_of_a_report_does_not_tear_it(db_url, engine, tmp_path):
    from reports.build import build_report

    assert refresh(engine, tmp_path, from_raw=RAW, providers=["tencent"]).exit_code == 0
    age(engine)
    reader = make_engine(db_url)
    writer = make_engine(db_url)
    fired: list[bool] = []

    @event.listens_for(reader, "after_cursor_execute")
    def refresh_now(*_args: object) -> None:
        if not fired:  # right after the report's first query, tonight's refresh commits
            fired.append(True)
            assert (
                refresh(
                    writer, tmp_path, make_config(tmp_path), from_raw=RAW, providers=["tencent"]
                ).exit_code
                == 0
            )

    try:
        report = build_report(reader, dt.date.today())
    finally:
        reader.dispose()
        writer.dispose()
    assert fired
    newest_listed = max(
        dt.date.fromisoformat(str(d)[:10]) for d in report.tables["prices"]["observed_at_utc"]
    )
    assert report.as_of == newest_listed, (
        f"the report says newest {report.as_of}, its prices file {newest_listed}"
    )
