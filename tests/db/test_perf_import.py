"""The bulk import path (issue 8): the quick check of repeated rows and the direct executemany store
exactly what the full check and SQLAlchemy's own insert store; atomic, line-numbered and idempotent
across batches; ``changed`` as the row-by-row definition counts it. Behaviour only, never timings."""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select, text

from db import store
from db.schema import instances, prices, scrape_runs
from planner.config import load_config
from planner.ingest import importer
from planner.ingest.importer import ImportFileError, import_csv
from tests.conftest import price_row, write_csv
from vocab import IMPORT_COLUMNS

FX = {**load_config(env={}).section("fx"), "USD": 7.2}
COLUMNS = list(IMPORT_COLUMNS)  # the import format, from its one definition


def history(days: int = 12) -> list[dict[str, object]]:
    """Several instances, modes, currencies and spellings, a price that moves now and then."""
    rows = []
    series = [
        dict(provider="tencent", region="ap-beijing", instance_type="GT4", gpu_model="A100-40GB", gpu_count=1),
        dict(provider="Aliyun", region=" cn-beijing ", instance_type="gn7", gpu_model="NVIDIA A100 80GB", gpu_count=8),
        dict(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="4090", gpu_count="1.0"),
        dict(provider="volcengine", region="cn-shanghai", instance_type="ini2", gpu_model="H800", gpu_count=2),
    ]  # fmt: skip
    modes = [
        ("payg", "CNY", "28.64"),
        ("包月", "CNY", "12,948.5"),
        ("spot", "USD", " 1.25 "),
        ("yearly", "CNY", "1e5"),
    ]
    for d in range(days):
        day = dt.date(2026, 10, 1) + dt.timedelta(days=d)
        for i, s in enumerate(series):
            for billing, currency, price in modes:
                if d % 5 == 4 and billing == "payg":
                    price = f"{29 + i + d / 100:.4f}"  # a price that moves
                at = day.isoformat() if i % 2 else f"{day.isoformat()}T08:30:00+08:00"
                rows.append(
                    {**s, "billing": billing, "currency": currency, "price": price, "observed_at": at}
                    | {"vcpus": 32 if i == 0 else "", "memory_gb": "", "source": f"doc {i}"}
                )
    return rows


def write_rows(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def dump(engine) -> list[tuple]:
    """Every stored row as the database holds it (raw SQL, so no type processing hides a difference),
    instances by key rather than id."""
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT i.provider, i.region, i.instance_type, i.gpu_model, i.gpu_count, i.vcpus, i.memory_gb, "
            "i.gpu_note, p.billing, p.price, p.currency, p.unit, p.cny_per_gpu_hour, p.tiers, p.observed_at, "
            "p.observed_on, p.source, p.median_price "
            "FROM prices p JOIN instances i ON i.id = p.instance_id ORDER BY p.id"
        ).all()
        runs = conn.execute(
            select(scrape_runs.c.offers_seen, scrape_runs.c.prices_stored, scrape_runs.c.prices_changed)
        ).all()
    return [tuple(r) for r in [*rows, *runs]]


def test_the_quick_path_stores_exactly_what_the_full_check_stores(engine, tmp_path, monkeypatch):
    path = write_rows(tmp_path / "h.csv", history())
    quick = import_csv(engine, path, FX, batch_rows=7)
    quick_rows = dump(engine)
    with engine.begin() as conn:
        for table in (prices, instances, scrape_runs):
            conn.execute(table.delete())
    monkeypatch.setattr(importer._RowReader, "read", importer._RowReader.check)  # noqa: SLF001
    full = import_csv(engine, path, FX, batch_rows=7)
    counts = ("rows", "stored", "changed", "already_present", "instances")
    assert [getattr(quick, c) for c in counts] == [getattr(full, c) for c in counts]
    # A row at its series' previous price confirms that one instead of adding a row (prices are levels).
    assert quick.stored + quick.already_present == len(history()) and quick.changed > 0
    assert quick.stored < len(history())
    assert quick_rows == dump(engine)


def test_stored_values_are_what_sqlalchemy_itself_writes(engine, tmp_path):
    import_csv(
        engine, write_csv(tmp_path / "a.csv", [price_row(observed_at="2026-11-01T08:30:15+08:00")]), FX
    )
    with engine.begin() as conn:
        (iid,) = conn.execute(select(instances.c.id)).one()
        (run,) = conn.execute(select(scrape_runs.c.id)).one()
        conn.execute(
            insert(prices),
            {
                "instance_id": iid,
                "billing": "monthly",
                "price": Decimal("28.64"),
                "currency": "CNY",
                "unit": "hour",
                "cny_per_gpu_hour": Decimal("28.640000"),
                "observed_at": dt.datetime(2026, 11, 1, 0, 30, 15),
                "observed_on": dt.date(2026, 11, 1),
                "run_id": run,
            },
        )
        raw = conn.exec_driver_sql(
            "SELECT price, cny_per_gpu_hour, observed_at, observed_on FROM prices ORDER BY id"
        ).all()
        typed = conn.execute(select(prices.c.observed_at, prices.c.observed_on, prices.c.price)).all()
    assert raw[0] == raw[1]
    assert typed[0] == (dt.datetime(2026, 11, 1, 0, 30, 15), dt.date(2026, 11, 1), Decimal("28.64"))


def test_changed_counts_each_move_from_the_previous_observation(engine, tmp_path):
    rows = history(15)
    result = import_csv(engine, write_rows(tmp_path / "h.csv", rows), FX, batch_rows=5)
    with engine.connect() as conn:
        stored = conn.execute(
            select(prices.c.instance_id, prices.c.billing, prices.c.observed_on, prices.c.price).order_by(
                prices.c.instance_id, prices.c.billing, prices.c.observed_on
            )
        ).all()
    moves = sum(
        1
        for before, after in zip(stored, stored[1:], strict=False)
        if before[:2] == after[:2] and before[3] != after[3]
    )
    assert result.changed == moves > 0
    again = import_csv(engine, write_rows(tmp_path / "h.csv", rows), FX, batch_rows=5)
    assert (again.stored, again.changed, again.already_present) == (0, 0, len(rows))


def test_a_duplicate_day_in_the_file_keeps_the_first_row(engine, tmp_path):
    rows = [price_row(price="28"), price_row(price="27"), price_row(observed_at="2026-11-02", price="26")]
    result = import_csv(engine, write_csv(tmp_path / "d.csv", rows), FX, batch_rows=1)
    assert (result.stored, result.already_present, result.changed) == (2, 1, 1)
    with engine.connect() as conn:
        assert conn.execute(select(prices.c.price).order_by(prices.c.observed_on)).scalars().all() == [
            Decimal("28"),
            Decimal("26"),
        ]


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ({"price": "abc"}, "price 'abc' is not a number"),
        ({"price": "-1"}, "price '-1' must be greater than zero"),
        ({"price": "NaN"}, "price 'NaN' is not a finite number"),
        ({"price": ""}, "price is empty"),
        ({"price": "0" * 600 + "1"}, "price is longer than 500 characters"),
        ({"price": "999999"}, "absurd"),
        ({"observed_at": "2026-13-01"}, "observed_at '2026-13-01' is not an ISO date"),
        ({"gpu_count": "2"}, "was 1x A100-40GB earlier in the file, here 2x A100-40GB"),
        ({"gpu_model": "A100-80GB"}, "was 1x A100-40GB earlier in the file, here 1x A100-80GB"),
        ({"currency": "EUR"}, "currency 'EUR' has no rate"),
    ],
)
def test_a_bad_row_after_many_good_batches_stores_nothing(engine, tmp_path, bad, expected):
    good = [
        price_row(observed_at=(dt.date(2026, 9, 1) + dt.timedelta(days=d)).isoformat()) for d in range(40)
    ]
    path = write_csv(tmp_path / "late.csv", [*good, price_row(observed_at="2026-10-11") | bad])
    with pytest.raises(ImportFileError) as err:
        import_csv(engine, path, FX, batch_rows=8)
    assert err.value.message.startswith("late.csv: line 42: "), err.value.message
    assert expected in err.value.message
    with engine.connect() as conn:
        for table in (prices, instances, scrape_runs):
            assert conn.execute(select(func.count()).select_from(table)).scalar_one() == 0


def test_blank_lines_are_skipped_anywhere(engine, tmp_path):
    path = write_csv(tmp_path / "b.csv", [price_row(), price_row(observed_at="2026-11-02")])
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0], "", lines[1], ",,,,,,,,", lines[2], ""]) + "\n", encoding="utf-8")
    result = import_csv(engine, path, FX)
    assert (result.rows, result.stored, result.already_present) == (2, 1, 1)  # the 2nd confirms the 1st


def test_a_refresh_still_gets_its_changes_listed(engine):
    key = ("tencent", "ap-beijing", "GT4")
    with engine.begin() as conn:
        run = store.start_run(conn, "tencent", "refresh")
        ids = store.upsert_instances(conn, [store.InstanceRow(*key, "A100-40GB", 1)])
        rows = [
            store.PriceRow(
                key, "on_demand", Decimal(p), "CNY", "hour", Decimal(p), dt.datetime(2026, 10, d, 3)
            )
            for d, p in ((1, "20"), (2, "20"), (3, "25"))
        ]
        counts = store.insert_prices(conn, rows, ids, run)
    assert (counts.stored, counts.changed, counts.confirmed) == (2, 1, 1)  # day 2 confirms day 1
    (change,) = counts.changes
    assert (change.instance, change.before_day, change.before, change.after) == (
        key,
        dt.date(2026, 10, 1),  # the level 20 was first seen on day 1
        Decimal("20"),
        Decimal("25"),
    )


def test_sqlite_import_writes_no_row_outside_its_transaction(tmp_path):
    """A failed import leaves the file's database as it was (checked with a second connection)."""
    from db.engine import ensure_schema, make_engine

    eng = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    ensure_schema(eng)
    good = [
        price_row(observed_at=(dt.date(2026, 9, 1) + dt.timedelta(days=d)).isoformat()) for d in range(30)
    ]
    with pytest.raises(ImportFileError):
        import_csv(eng, write_csv(tmp_path / "x.csv", [*good, price_row(price="x")]), FX, batch_rows=4)
    with eng.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM prices")).scalar() == 0
    eng.dispose()


def write_many(path: Path, rows: int) -> Path:
    from bench.generate import write

    write(path, rows)
    return path


def test_the_bench_history_imports_and_reimports(engine, tmp_path):
    path = write_many(tmp_path / "bench.csv", 9000)
    first = import_csv(engine, path, FX, batch_rows=1000)
    assert first.stored + first.already_present == first.rows > 8000 and first.changed > 0
    assert first.stored < first.rows  # unchanged prices confirm their level instead of adding rows
    again = import_csv(engine, path, FX, batch_rows=1000)
    assert (again.stored, again.already_present) == (0, first.rows)


def test_an_older_observation_imported_later_is_not_a_change(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "new.csv", [price_row(observed_at="2026-11-10", price="20")]), FX)
    older = [
        price_row(observed_at="2026-11-05", price="30"),
        price_row(observed_at="2026-11-06", price="30"),
        price_row(observed_at="2026-11-07", price="31"),
    ]
    result = import_csv(engine, write_csv(tmp_path / "old.csv", older), FX, batch_rows=2)
    # 11-06 confirms 11-05's 30; only 30 -> 31 is a change; nothing against the newer 20
    assert (result.stored, result.already_present, result.changed) == (2, 1, 1)


@pytest.mark.parametrize("batch_rows", [1, 3, 1000])
def test_changed_does_not_depend_on_batches_or_order(engine, tmp_path, batch_rows):
    import random

    rng = random.Random(batch_rows)
    day = dt.date(2026, 9, 1)
    kinds = [dict(), dict(billing="monthly"), dict(instance_type="OTHER")]

    def row(d: int, kind: int) -> dict[str, object]:
        price = rng.choice(["10", "10", "11", "12"]) if kind != 1 else rng.choice(["7000", "7100"])
        return price_row(observed_at=(day + dt.timedelta(days=d)).isoformat(), price=price) | kinds[kind]

    stored = [row(d, k) for d in range(0, 40, 3) for k in range(3)]
    import_csv(engine, write_csv(tmp_path / "a.csv", stored), FX)
    backfill = [row(d, k) for d in range(1, 45) if d % 3 for k in range(3)]
    rng.shuffle(backfill)
    result = import_csv(engine, write_csv(tmp_path / "b.csv", backfill), FX, batch_rows=batch_rows)

    with engine.connect() as conn:
        rows = conn.execute(
            select(
                prices.c.instance_id, prices.c.billing, prices.c.observed_on, prices.c.price, prices.c.run_id
            ).order_by(prices.c.instance_id, prices.c.billing, prices.c.observed_on)
        ).all()
    expected = sum(
        1
        for before, after in zip(rows, rows[1:], strict=False)
        if after.run_id == result.run_id and before[:2] == after[:2] and before.price != after.price
    )
    assert result.stored + result.already_present == len(backfill) and result.changed == expected > 0
