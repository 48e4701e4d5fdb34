"""Issue 18's classes, each proved where the mistake can live (and issue 16's corrections).

- Numbers that must never be stored or printed: one price check for every price a provider or a file
  sends (tiers included), one strict number parser, values too small to mean anything refused before
  they overflow, JSON always valid, output to a full disk one line.
- Text: control and invisible characters stripped on the way in and when printing; formula cells
  neutralised in every CSV (see also tests/ingest/test_fuzz_import.py).
- Concurrency and data: writers take turns (the snapshot is loaded once, never beside an import; a
  refresh waits for an import), instances are upserted, hints say what happened; replays keep their
  recorded time and the future is refused; export -> import is lossless; reads answer on a full disk.
- Corrections: a conflicting import names each conflict with its line; --replace stores it.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import func, select

from db import store
from db.engine import ensure_schema, make_engine
from db.schema import instances, prices, scrape_runs
from planner.config import load_config
from planner.ingest.importer import import_csv
from planner.ingest.normalize import normalize_offers
from planner.ingest.snapshot import ensure_prices
from planner.output import dumps_json, table
from tests.conftest import price_row, write_csv
from tests.helpers.cli import assert_one_line_error
from tests.helpers.disk import fill, tiny_disk
from tests.helpers.offers import T4 as TENCENT_T4
from tests.helpers.replay import RAW, REPLAY_DAYS, refresh, replay_copy
from vocab import IMPORT_REQUIRED_COLUMNS

FX = load_config(env={}).section("fx")
T4 = replace(TENCENT_T4, tiers=((96, Decimal("8.00")), (360, Decimal("7.50"))))


def write_rows(path: Path, rows: list[dict[str, object]], columns: list[str] | None = None) -> Path:
    """An import file written by the csv module (fields with commas or quotes stay whole)."""
    columns = columns or list(IMPORT_REQUIRED_COLUMNS)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


# --- Numbers that must never be stored or printed ---------------------------------------------------


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"price": Decimal("0.0000001")}, "rounds to zero"),
        ({"price": Decimal("0.000001"), "billing": "monthly", "unit": "month"}, "rounds to zero"),
        ({"tiers": ((96, Decimal("0.5")),)}, "tenfold"),  # 17 times under 8.68, above the T4's floor
        ({"tiers": ((96, Decimal("1e30")),)}, "too large"),
        ({"tiers": ((96, Decimal("0.0000001")),)}, "rounds to zero"),
        ({"tiers": ((96, Decimal("100")),)}, "tenfold"),
    ],
)
def test_numbers_every_provider_price_and_tier_goes_through_the_one_price_check(change, reason):
    offer = replace(T4, **change)
    result = normalize_offers([offer], FX)
    assert result.offers == () and len(result.rejected) == 1
    assert reason in result.rejected[0], result.rejected


def test_numbers_a_sane_tiered_offer_still_passes():
    (offer,) = normalize_offers([T4], FX).offers
    assert offer.tiers == ((96, Decimal("8.00")), (360, Decimal("7.50")))


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["quote", "--gpu", "T4", "--hours", "1e-20"], "too small"),
        (["quote", "--gpu", "T4", "--hours", "3_0"], "not a number"),
        (["plan", "--params", "7B", "--tokens", "1B", "--task", "lora", "--deadline-hours", "1e-20"], "too small"),
        (["plan", "--params", "7B", "--tokens", "1B", "--task", "lora", "--deadline-hours", "5e-324"], "too small"),
        (["estimate", "--params", "7B", "--tokens", "1B", "--task", "lora", "--gpu", "A100-80GB", "--mfu", "5e-324"], "too small"),
        (["estimate", "--params", "7B", "--task", "lora", "--mfu", "٠.٤"], "not a number"),
        (["runs", "--limit", "100000000000000000000"], "range"),
        (["runs", "--limit", "1e20"], "--limit"),
    ],
)  # fmt: skip
def test_numbers_too_small_huge_or_foreign_on_the_command_line_are_one_line(run_cli, args, fragment):
    result = run_cli(*args)
    assert_one_line_error(result, 2, fragment)


def test_numbers_a_database_url_with_a_port_that_is_not_a_number_is_one_line(runner):
    from planner.cli import cli

    result = runner.invoke(cli, ["--db", "postgresql+psycopg://u@db.example:abc/x", "prices"])
    assert_one_line_error(result, 2, "its port is not a number")


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"price": "8,68"}, "price '8,68' is not a number"),
        ({"price": "3_0"}, "price '3_0' is not a number"),
        ({"price": "٣٠"}, "is not a number"),
        ({"price": "１２"}, "is not a number"),
        ({"gpu_count": "1_0"}, "gpu_count '1_0' is not a number"),
        ({"gpu_count": "١"}, "gpu_count"),
        ({"vcpus": "99999999999999999999"}, "vcpus"),
        ({"vcpus": "3_2"}, "vcpus"),
        ({"memory_gb": "1e400"}, "memory_gb"),
        ({"observed_at": "0001-01-01T00:00:00-05:00"}, "before 2000"),
        ({"observed_at": "9999-12-31T23:00:00+14:00"}, "in the future"),
        ({"observed_at": "9999-12-31T23:59:59-14:00"}, "in the future"),
    ],
)
def test_numbers_an_import_refuses_what_it_cannot_read_exactly(run_cli, engine, tmp_path, change, fragment):
    columns = [*IMPORT_REQUIRED_COLUMNS, "vcpus", "memory_gb"]
    path = write_rows(
        tmp_path / "n.csv", [price_row(), price_row(**{"observed_at": "2026-11-02", **change})], columns
    )
    result = run_cli("import", str(path))
    assert_one_line_error(result, 2, "n.csv: line 3")
    assert fragment in result.stderr
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(prices)).scalar_one() == 0


def test_numbers_thousands_separators_in_the_right_places_are_read(run_cli, engine, tmp_path):
    path = write_rows(tmp_path / "ok.csv", [price_row(billing="monthly", price="12,948.50")])
    assert run_cli("import", str(path)).exit_code == 0
    with engine.connect() as conn:
        assert conn.execute(select(prices.c.price)).scalar_one() == Decimal("12948.5")


def test_numbers_json_output_is_always_valid_json():
    text_out = dumps_json({"a": float("inf"), "b": Decimal("NaN"), "c": [float("-inf"), 1.5]})
    assert json.loads(text_out) == {"a": None, "b": None, "c": [None, 1.5]}
    assert "Infinity" not in text_out and "NaN" not in text_out


@pytest.mark.slow  # a real planner process
def test_numbers_output_to_a_full_disk_is_one_line(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "PLANNER_DATA_DIR": str(tmp_path / "data")}
    env.pop("PLANNER_DATABASE_URL", None)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "planner", "prices"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    (error,) = errors
    assert "cannot write the output" in error and "No space left on device" in error, done.stderr


def test_numbers_save_raw_and_the_schedule_log_on_a_full_disk_are_one_line(engine, tmp_path, capsys):
    import logging

    from planner.ops.scheduler import logging_to

    with tiny_disk(tmp_path / "disk", size="256k") as disk:
        if disk is None:
            pytest.skip("mounting a file system needs root")
        fill(disk, 0)
        with pytest.raises(Exception) as err:
            refresh(engine, tmp_path, from_raw=RAW, save_raw=disk / "raw")
        assert "cannot write the raw answers' manifest" in str(err.value)
        with logging_to(disk / "planner.log"):
            for _ in range(3):
                logging.getLogger("planner.test").info("a line %s", "x" * 4000)
        err_text = capsys.readouterr().err
        assert err_text.count("cannot write the log file") == 1, err_text
        assert "Logging error" not in err_text and "Traceback" not in err_text
    with engine.connect() as conn:
        errors = (
            conn.execute(select(scrape_runs.c.error).where(scrape_runs.c.status == "failed")).scalars().all()
        )
    assert errors and all(
        "cannot save the raw response" in e or "no usable price file" in e for e in errors
    ), errors


# --- Text ---------------------------------------------------------------------------------------------


def test_text_invisible_characters_are_stripped_on_the_way_in(run_cli, engine, tmp_path):
    rows = [
        price_row(instance_type="RTX 4090", gpu_model="RTX 4090", provider="autodl", region="west-B"),
        price_row(
            instance_type="RTX 4090\u200b",
            gpu_model="RTX\u202e 4090",
            provider="autodl",
            region="\ufeffwest-B\u2028",
            observed_at="2026-11-02",
        ),
    ]
    assert run_cli("import", str(write_rows(tmp_path / "z.csv", rows))).exit_code == 0
    with engine.connect() as conn:
        names = conn.execute(select(instances.c.region, instances.c.instance_type)).all()
    assert names == [("west-B", "RTX 4090")]


@pytest.mark.parametrize("name", ["cn-bei\x9b31mjing", "ap-\x1b[2Jbeijing", "a\x00b"])
def test_text_control_characters_in_a_name_are_refused_with_their_line(run_cli, tmp_path, name):
    result = run_cli("import", str(write_rows(tmp_path / "c.csv", [price_row(region=name)])))
    assert_one_line_error(result, 2, "c.csv: line 2: region")
    assert "control character" in result.stderr


def test_text_control_and_invisible_characters_never_reach_the_terminal():
    shown = table([["\x9b31mred\u202eevil\u200b", "ok"]], ["name\x1b]0;x\x07", "b"])
    assert not any(ch in shown for ch in "\x9b\x1b\x07\u202e\u200b")
    assert "redevil" in shown
    assert "\u202e" not in dumps_json({"a": "x\u202ey\x9d"})


def test_text_run_errors_and_notes_lose_control_and_invisible_characters():
    from planner.ingest.run_text import clean

    assert clean("HTTP 500: \x9b2J\u202eevil\x1b]0;t\x07", 200) == "HTTP 500:  2Jevil ]0;t "
    assert clean("line one\nline\u2028two", 200, keep_lines=True) == "line one\nlinetwo"


def test_text_an_error_line_never_carries_terminal_controls(run_cli):
    result = run_cli("quote", "--gpu", "A100\x9b2J\u202e", "--hours", "5")
    assert result.exit_code == 2
    assert not any(ch in result.stderr for ch in "\x9b\u202e\x1b")


def test_text_provider_names_lose_invisible_characters_and_keep_one_instance():
    twin = replace(T4, instance_type="GN7.2XLARGE32\u200b", region="ap-beijing\u2066")
    result = normalize_offers([T4, twin], FX)
    assert [o.instance_key for o in result.offers] == [("tencent", "ap-beijing", "GN7.2XLARGE32")]


# --- Concurrency and data -----------------------------------------------------------------------------


def hold_write_lock(database: Path, seconds: float, started: threading.Event) -> threading.Thread:
    """Another process's long import, as SQLite sees it: its write lock held for ``seconds``."""
    import sqlite3

    def hold() -> None:
        conn = sqlite3.connect(database, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        started.set()
        time.sleep(seconds)
        conn.execute("COMMIT")
        conn.close()

    thread = threading.Thread(target=hold)
    thread.start()
    return thread


def test_concurrency_six_first_readers_load_the_snapshot_once(db_url, engine):
    config = load_config(env={})
    engines = [make_engine(db_url) for _ in range(6)]
    loaded: list[object] = []
    threads = [threading.Thread(target=lambda e=e: loaded.append(ensure_prices(e, config))) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for e in engines:
        e.dispose()
    assert sum(1 for info in loaded if info is not None) == 1
    with engine.connect() as conn:
        runs = conn.execute(select(func.count()).where(scrape_runs.c.kind == "snapshot")).scalar_one()
    assert runs == 1


def test_concurrency_the_snapshot_check_is_made_under_the_write_lock(db_url, engine, tmp_path, monkeypatch):
    """Even when the quick check saw an empty database, the load finds the import's prices under the
    lock and stores nothing."""
    from db import queries

    assert import_csv(engine, write_csv(tmp_path / "p.csv", [price_row()]), FX).stored == 1
    real = queries.has_prices
    calls = []

    def stale_first(conn):  # the quick check ran before the import committed
        calls.append(1)
        return False if len(calls) == 1 else real(conn)

    monkeypatch.setattr(queries, "has_prices", stale_first)
    monkeypatch.setattr("planner.ingest.importer.has_prices", stale_first, raising=False)
    assert ensure_prices(engine, load_config(env={})) is None
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).where(scrape_runs.c.kind == "snapshot")).scalar_one() == 0


@pytest.mark.slow  # holds a real lock for 1.5 s of wall clock
def test_concurrency_a_sqlite_refresh_waits_for_a_long_import(tmp_path):
    """The import holds the write lock longer than the busy timeout: the refresh waits, then stores."""
    url = f"sqlite:///{tmp_path / 'w.db'}"
    engine = make_engine(url, busy_timeout_s=0.2)
    ensure_schema(engine)
    started = threading.Event()
    holder = hold_write_lock(tmp_path / "w.db", 1.5, started)
    assert started.wait(5)
    summary = refresh(engine, tmp_path, from_raw=RAW)
    holder.join()
    assert summary.exit_code == 0, [(o.provider, o.error) for o in summary.outcomes]
    assert all(o.status == "ok" for o in summary.outcomes)


def test_concurrency_overlapping_imports_do_not_fail_on_the_instances_constraint(db_url, engine, tmp_path):
    rows = [price_row(instance_type=f"T{i}", observed_at="2026-11-01") for i in range(200)]
    paths = [write_csv(tmp_path / f"{n}.csv", rows) for n in "ab"]
    engines = [make_engine(db_url) for _ in paths]
    errors: list[BaseException] = []

    def run(e, p) -> None:
        try:
            import_csv(e, p, FX)
        except BaseException as err:  # noqa: BLE001 - the test reports whatever went wrong
            errors.append(err)

    threads = [threading.Thread(target=run, args=(e, p)) for e, p in zip(engines, paths, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for e in engines:
        e.dispose()
    assert errors == []
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(instances)).scalar_one() == 200
        assert conn.execute(select(func.count()).select_from(prices)).scalar_one() == 200


@pytest.mark.parametrize(
    "message, hint",
    [
        ("database is locked", "another planner process"),
        ("canceling statement due to lock timeout", "another planner process"),
        ("attempt to write a readonly database", "read-only"),
        ("database or disk is full", "disk holding the database is full"),
        ('duplicate key value violates unique constraint "uq_instances"', "same moment"),
    ],
)
def test_concurrency_hints_say_what_the_database_said(message, hint):
    assert hint in store.write_hint(Exception(message))
    assert "check the disk has room" not in store.write_hint(Exception(message))


def test_data_a_replay_keeps_the_recorded_observation_time(engine, tmp_path):
    assert refresh(engine, tmp_path, from_raw=RAW).exit_code == 0
    with engine.connect() as conn:
        days = set(conn.execute(select(prices.c.observed_on)).scalars())
    assert days == set(REPLAY_DAYS.values())  # each provider's recorded day, not today's


def test_data_a_replay_recorded_in_the_future_is_refused(engine, tmp_path):
    raw = replay_copy(tmp_path)
    manifest = json.loads((raw / "manifest.json").read_text(encoding="utf-8"))
    future = (dt.datetime.now(dt.UTC) + dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest["providers"]["tencent"]["recorded_at"] = future
    (raw / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    summary = refresh(engine, tmp_path, from_raw=raw)
    tencent = next(o for o in summary.outcomes if o.provider == "tencent")
    assert tencent.status == "skipped" and "in the future" in tencent.error


def test_data_an_import_refuses_observed_at_in_the_future(run_cli, engine, tmp_path):
    ahead = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat(timespec="seconds")
    path = write_rows(tmp_path / "f.csv", [price_row(observed_at=ahead)])
    assert_one_line_error(run_cli("import", str(path)), 2, "is in the future")


def quote_and_prices(url: str, workdir: Path) -> tuple[dict, dict]:
    from click.testing import CliRunner

    from planner.cli import cli

    runner = CliRunner()
    old = os.getcwd()
    os.chdir(workdir)
    try:
        quote = runner.invoke(
            cli, ["--db", url, "quote", "--gpu", "T4", "--hours", "1000", "--top", "100", "--format", "json"]
        )
        listed = runner.invoke(cli, ["--db", url, "prices", "--format", "json"])
    finally:
        os.chdir(old)
    assert quote.exit_code == 0 and listed.exit_code == 0, quote.output + listed.output
    return json.loads(quote.stdout), json.loads(listed.stdout)


def test_data_export_then_import_is_lossless(db_url, engine, tmp_path):
    """Replayed prices (Tencent's tiers, AutoDL's median and stock, Aliyun's GPU notes) exported from
    SQLite and imported into the test database (PostgreSQL when given) give the same answers."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    source = make_engine(source_url)
    ensure_schema(source)
    assert refresh(source, tmp_path, from_raw=RAW).exit_code == 0
    exported = tmp_path / "all.csv"
    from click.testing import CliRunner

    from planner.cli import cli

    assert CliRunner().invoke(cli, ["--db", source_url, "export", "--out", str(exported)]).exit_code == 0
    assert import_csv(engine, exported, FX).stored > 300
    before, after = quote_and_prices(source_url, workdir), quote_and_prices(db_url, workdir)
    assert before == after
    options = before[0]["options"]
    assert any(o.get("availability") for o in options)  # stock made the trip
    per_machine = [(p["availability"] or {}).get("max_idle_gpus_per_machine") for p in after[1]]
    assert 2 in per_machine  # AutoDL west-B's RTX 4090: at most 2 idle on one machine, after the trip too
    with source.connect() as conn:
        assert conn.execute(select(func.count()).where(prices.c.tiers.is_not(None))).scalar_one() > 0
        assert conn.execute(select(func.count()).where(prices.c.median_price.is_not(None))).scalar_one() > 0
    with engine.connect() as conn:
        for column in (prices.c.tiers, prices.c.median_price):
            assert conn.execute(select(func.count()).where(column.is_not(None))).scalar_one() > 0
        assert conn.execute(select(func.count()).where(instances.c.gpu_note.is_not(None))).scalar_one() > 0
    source.dispose()


def test_data_reads_answer_on_a_full_disk_and_say_why(tmp_path):
    from click.testing import CliRunner

    from planner.cli import cli

    with tiny_disk(tmp_path / "disk", size="4m") as disk:
        if disk is None:
            pytest.skip("mounting a file system needs root")
        url = f"sqlite:///{disk / 'planner.db'}"
        engine = make_engine(url)
        ensure_schema(engine)
        assert import_csv(engine, write_csv(tmp_path / "p.csv", [price_row()]), FX).stored == 1
        engine.dispose()  # its -shm and -wal files go: a reader must make them again
        fill(disk, 0)
        result = CliRunner().invoke(cli, ["--db", url, "prices", "--format", "json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)
        assert "is full" in result.stderr and "opened read-only" in result.stderr


# --- Corrections (issue 16) -----------------------------------------------------------------------------


def test_corrections_a_conflicting_import_names_each_conflict_with_its_line(run_cli, engine, tmp_path):
    assert (
        run_cli(
            "import", str(write_csv(tmp_path / "a.csv", [price_row(), price_row(region="ap-shanghai")]))
        ).exit_code
        == 0
    )
    fixed = [price_row(), price_row(region="ap-shanghai", price="27.5"), price_row(observed_at="2026-11-02")]
    result = run_cli("import", str(write_csv(tmp_path / "b.csv", fixed)))
    assert_one_line_error(result, 2, "b.csv: 1 price(s) differ")
    conflict = next(line for line in result.stderr.splitlines() if "line 3: " in line)
    assert "tencent/ap-shanghai/GT4.4XLARGE96" in conflict and "on_demand 2026-11-01" in conflict
    assert "28.64" in conflict and "27.5" in conflict  # stored, and in the file
    assert "--replace" in result.stderr and "already present" not in result.stderr
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(prices)).scalar_one() == 2  # nothing of b.csv


def test_corrections_import_replace_stores_the_correction_and_notes_the_old_price(run_cli, engine, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "a.csv", [price_row()]))).exit_code == 0
    result = run_cli("import", "--replace", str(write_csv(tmp_path / "b.csv", [price_row(price="27.5")])))
    assert result.exit_code == 0, result.output
    assert "1 replaced" in result.stdout
    with engine.connect() as conn:
        assert conn.execute(select(prices.c.price)).scalar_one() == Decimal("27.5")
        notes = conn.execute(select(scrape_runs.c.notes).order_by(scrape_runs.c.id.desc())).scalars().first()
    assert "line 2: " in notes and "tencent/ap-beijing/GT4.4XLARGE96" in notes
    assert "2026-11-01 was 28.64 -> 27.5" in notes
    again = run_cli("import", str(write_csv(tmp_path / "c.csv", [price_row(price="27.5")])))
    assert again.exit_code == 0 and "1 already present" in again.stdout
