"""A full disk and a read-only database: one clear error line with a hint, and no partial state.

The full disk is real where it can be: the SQLite file lives on a 2 MB tmpfs (mounted for the test;
CI runs as root), filled up to a few kilobytes; where mounting is not allowed, SQLite's
``max_page_count`` stands in for the disk's end. The read-only database is a SQLite file opened with
``mode=ro`` and a PostgreSQL session with ``default_transaction_read_only``: writing commands fail in
one line and store nothing, reading commands keep answering.

After the disk has room again, the next refresh and import complete and store everything.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import event, func, select

from db.engine import ensure_schema, make_engine
from db.schema import prices, scrape_runs
from tests.helpers.cli import assert_one_line_error
from tests.helpers.db_checks import assert_intact, last_seen, stored
from tests.helpers.db_edits import age
from tests.helpers.disk import _big_csv, fill, tiny_disk
from tests.helpers.replay import EXPECTED_STORED_BY_DEFAULT, RAW, REPLAY_DAYS, refresh

pytestmark = pytest.mark.slow


def invoke(url: str, workdir: Path, *args: str):
    from planner.cli import cli

    old = os.getcwd()
    os.chdir(workdir)
    try:
        return CliRunner().invoke(cli, ["--db", url, *args])
    finally:
        os.chdir(old)


def test_a_full_disk_is_one_clear_error_and_nothing_half_stored(tmp_path, monkeypatch):
    workdir = tmp_path / "work"
    workdir.mkdir()
    with tiny_disk(tmp_path / "disk") as disk:
        folder = disk or tmp_path / "disk"
        url = f"sqlite:///{folder / 'planner.db'}"
        engine = make_engine(url)
        ensure_schema(engine)
        assert refresh(engine, tmp_path, from_raw=RAW).exit_code == 0  # yesterday's night
        age(engine)
        before = stored(engine)
        with engine.connect() as conn:
            runs_before = conn.execute(select(func.count()).select_from(scrape_runs)).scalar_one()
        big = _big_csv(workdir / "big.csv", dt.date(2015, 1, 1), rows=2000)
        if disk:
            filler = fill(disk, leave_bytes=8 * 1024)
        else:  # no mount allowed: the database may not grow by more than a page
            with engine.connect() as conn:
                pages = conn.exec_driver_sql("PRAGMA page_count").scalar()

            def wrap(original):
                def make(*args, **kwargs):
                    made = original(*args, **kwargs)
                    event.listen(
                        made, "connect", lambda c, _r: c.execute(f"PRAGMA max_page_count = {int(pages)}")
                    )
                    return made

                return make

            import planner.storage

            monkeypatch.setattr(planner.storage, "make_engine", wrap(planner.storage.make_engine))

        tonight = invoke(url, workdir, "refresh", "--from-raw", str(RAW))
        assert tonight.exit_code == 1 and "Traceback" not in tonight.output, tonight.output
        assert "database or disk is full" in tonight.output, tonight.output
        during = assert_intact(engine, url, before, "refresh on a full disk")
        seen = last_seen(engine)
        for (
            provider,
            count,
        ) in EXPECTED_STORED_BY_DEFAULT.items():  # a small provider may fit; none is half stored
            assert sum(1 for r in seen if r[0] == provider and r[1] == REPLAY_DAYS[provider]) in (
                0,
                count,
            ), provider

        imported = invoke(url, workdir, "import", str(big))
        assert_one_line_error(imported, 1, "nothing imported from")
        assert "database or disk is full" in imported.stderr
        assert stored(engine) == during
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(prices)).scalar_one() == len(during)

        if disk:  # files on the full disk: whole or not at all
            report = invoke(url, workdir, "report", "--out", str(disk / "reports"))
            assert_one_line_error(report, 1, "cannot write the report")
            exported = invoke(url, workdir, "export", "--out", str(disk / "prices.csv"))
            assert_one_line_error(exported, 1, "cannot write")
            assert not (disk / "prices.csv").exists()
            assert not [p for p in disk.rglob("*.tmp")], "a temporary file was left behind"
            filler.unlink()
        else:
            monkeypatch.undo()

        again = invoke(url, workdir, "refresh", "--from-raw", str(RAW))
        assert again.exit_code == 0, again.output
        assert_intact(engine, url, before, "refresh once the disk has room")
        seen = last_seen(engine)  # the same prices again: each level confirmed on the replay's day
        assert {
            p: sum(1 for r in seen if r[0] == p and r[1] == REPLAY_DAYS[p])
            for p in EXPECTED_STORED_BY_DEFAULT
        } == EXPECTED_STORED_BY_DEFAULT
        assert invoke(url, workdir, "import", str(big)).exit_code == 0
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(scrape_runs)).scalar_one() > runs_before
        engine.dispose()


def read_only(db_url: str, tmp_path: Path) -> str:
    """The same database, opened so that every write is refused."""
    if db_url.startswith("sqlite"):
        return f"sqlite:///file:{db_url.removeprefix('sqlite:///')}?mode=ro&uri=true"
    return db_url + "%20-cdefault_transaction_read_only%3Don"


def test_a_read_only_database_refuses_writes_in_one_line_and_still_answers(db_url, engine, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    assert refresh(engine, tmp_path, from_raw=RAW).exit_code == 0
    age(engine)
    before = stored(engine)
    url = read_only(db_url, tmp_path)
    result = invoke(url, workdir, "refresh", "--from-raw", str(RAW))
    assert_one_line_error(result, 1, "cannot record the ")  # the first provider's run, refused
    result = invoke(url, workdir, "import", str(_big_csv(workdir / "big.csv", dt.date(2015, 1, 1))))
    assert_one_line_error(result, 1, "nothing imported from")
    assert stored(engine) == before
    for args in (
        ["prices", "--format", "json"],
        ["quote", "--gpu", "A100", "--hours", "100"],
        ["history", "--gpu", "RTX4090"],
        ["runs"],
        ["report", "--out", str(tmp_path / "reports")],
    ):
        answered = invoke(url, workdir, *args)
        assert answered.exit_code == 0, (args, answered.output)
    assert len(list((tmp_path / "reports").glob("*.csv"))) == 5


def test_an_empty_read_only_database_is_one_line_too(db_url, engine, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = invoke(read_only(db_url, tmp_path), workdir, "quote", "--gpu", "A100", "--hours", "100")
    assert_one_line_error(result, 1, "")


def test_a_read_only_file_system_is_one_line_for_every_command(tmp_path):
    """The database's folder remounted read-only (a full root partition often ends this way)."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    with tiny_disk(tmp_path / "disk", size="4m") as disk:
        if disk is None:
            pytest.skip("mounting a file system needs root")
        url = f"sqlite:///{disk / 'planner.db'}"
        engine = make_engine(url)
        ensure_schema(engine)
        assert refresh(engine, tmp_path, from_raw=RAW).exit_code == 0
        before = stored(engine)
        engine.dispose()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True, capture_output=True)
        for args in (
            ["refresh", "--from-raw", str(RAW)],
            ["import", str(_big_csv(workdir / "big.csv", dt.date(2015, 1, 1), rows=200))],
            ["report", "--out", str(disk / "reports")],
        ):
            result = invoke(url, workdir, *args)
            assert "read-only file system" in result.stderr, result.stderr
            # the exit-code rule: a folder the user named that cannot be written is theirs to change
            # (2); a database that cannot be written is a failure (1)
            assert_one_line_error(result, 2 if args[0] == "report" else 1, "")
        reading = invoke(url, workdir, "prices", "--format", "json")  # reads still answer, and say why
        assert reading.exit_code == 0, reading.stderr
        assert json.loads(reading.stdout)
        assert "read-only file system" in reading.stderr and "opened read-only" in reading.stderr
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True, capture_output=True)
        assert stored(engine) == before
        engine.dispose()


def test_a_lock_that_cannot_be_created_is_one_line(tmp_path, monkeypatch):
    """A database URL whose lock lives in the data folder, and a data folder that cannot be written."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data folder should be", encoding="utf-8")
    monkeypatch.setenv("PLANNER_DATA_DIR", str(blocked / "data"))
    workdir = tmp_path / "work"
    workdir.mkdir()
    database = tmp_path / "planner.db"
    engine = make_engine(f"sqlite:///{database}")
    ensure_schema(engine)
    engine.dispose()
    result = invoke(f"sqlite:///file:{database}?uri=true", workdir, "refresh", "--from-raw", str(RAW))
    assert_one_line_error(result, 1, "cannot create the refresh lock")
