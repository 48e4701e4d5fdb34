"""Corrections keep history: every price ``import --replace`` replaces stays recoverable, whole, in
``price_corrections`` (not in the run's notes, which held 1,000 and lost the rest), and a correction
changes only the columns its file gives (one of the required columns only kept to wipe the tiers, the
median and the source)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from db.bulk import replaced_prices
from db.schema import price_corrections, prices, scrape_runs
from planner.config import load_config
from planner.ingest.importer import ImportFileError, import_csv
from tests.conftest import price_row, write_csv
from vocab import IMPORT_REQUIRED_COLUMNS

FX = load_config(env={}).section("fx")
FULL = [*IMPORT_REQUIRED_COLUMNS, "source", "tiers", "median_price"]


def _rows(n: int, price: str) -> list[dict[str, object]]:
    return [price_row(instance_type=f"GT4.{i}XLARGE96", price=price) for i in range(n)]


def test_every_replaced_price_of_a_large_correction_is_recoverable(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "a.csv", _rows(1500, "28.64")), FX)
    result = import_csv(engine, write_csv(tmp_path / "b.csv", _rows(1500, "27.5")), FX, replace=True)
    assert result.replaced == 1500
    with engine.connect() as conn:
        kept = replaced_prices(conn, result.run_id)
        first_run = conn.execute(select(func.min(scrape_runs.c.id))).scalar_one()
        notes = conn.execute(
            select(scrape_runs.c.notes).where(scrape_runs.c.id == result.run_id)
        ).scalar_one()
        now = set(conn.execute(select(prices.c.price)).scalars())
    assert len(kept) == 1500  # the old notes kept 1,000 and lost 500
    assert {r["price"] for r in kept} == {Decimal("28.64")} and now == {Decimal("27.5")}
    assert {r["instance_type"] for r in kept} == {f"GT4.{i}XLARGE96" for i in range(1500)}
    assert {(r["replaced_run_id"], r["run_id"]) for r in kept} == {(first_run, result.run_id)}
    assert len(notes.splitlines()) <= 22 and "and 1480 more" in notes and "price_corrections" in notes


def test_a_correction_of_the_required_columns_keeps_the_tiers_median_and_source(engine, tmp_path):
    first = price_row(source="Tencent list price 2026-11", tiers='"[[96, ""27""]]"', median_price="29.1")
    import_csv(engine, write_csv(tmp_path / "full.csv", [first], FULL), FX)
    fixed = import_csv(engine, write_csv(tmp_path / "fix.csv", [price_row(price="28.0")]), FX, replace=True)
    assert fixed.replaced == 1
    with engine.connect() as conn:
        row = conn.execute(select(prices)).mappings().one()
    assert row["price"] == Decimal("28.0") and row["cny_per_gpu_hour"] == Decimal("28.0")
    assert (row["tiers"], row["median_price"], row["source"]) == (
        '[[96, "27"]]',
        Decimal("29.1"),
        "Tencent list price 2026-11",
    )
    assert row["run_id"] == fixed.run_id
    # the old row, whole
    with engine.connect() as conn:
        (old,) = replaced_prices(conn)
    assert (old["price"], old["tiers"], old["median_price"], old["source"]) == (
        Decimal("28.64"),
        '[[96, "27"]]',
        Decimal("29.1"),
        "Tencent list price 2026-11",
    )


def test_a_correction_changes_the_optional_columns_it_gives_even_to_nothing(engine, tmp_path):
    first = price_row(source="old source", tiers='"[[96, ""27""]]"', median_price="29.1")
    import_csv(engine, write_csv(tmp_path / "full.csv", [first], FULL), FX)
    columns = [*IMPORT_REQUIRED_COLUMNS, "source", "tiers"]
    fix = price_row(price="28.0", source="corrected by hand", tiers="")
    import_csv(engine, write_csv(tmp_path / "fix.csv", [fix], columns), FX, replace=True)
    with engine.connect() as conn:
        row = conn.execute(select(prices)).mappings().one()
        assert conn.execute(select(func.count()).select_from(price_corrections)).scalar_one() == 1
    assert (row["source"], row["tiers"], row["median_price"]) == ("corrected by hand", None, Decimal("29.1"))


def test_the_cli_replace_keeps_the_old_price_in_the_corrections_table(run_cli, engine, tmp_path):
    assert run_cli("import", str(write_csv(tmp_path / "a.csv", [price_row()]))).exit_code == 0
    result = run_cli("import", "--replace", str(write_csv(tmp_path / "b.csv", [price_row(price="27.5")])))
    assert result.exit_code == 0 and "1 replaced" in result.stdout, result.output
    with engine.connect() as conn:
        (old,) = replaced_prices(conn)
    assert (old["provider"], old["region"], old["billing"], old["price"]) == (
        "tencent",
        "ap-beijing",
        "on_demand",
        Decimal("28.64"),
    )


def test_a_correction_that_would_keep_tiers_tenfold_away_is_refused_naming_its_line(engine, tmp_path):
    first = price_row(source="list", tiers='"[[96, ""27""]]"', median_price="")
    import_csv(engine, write_csv(tmp_path / "full.csv", [first], FULL), FX)
    # the stored 28.64 was the mistake: the price is 286.4 (8 GPUs), and the tier 27 cannot stay
    fix = write_csv(tmp_path / "fix.csv", [price_row(price="286.4")])
    with pytest.raises(ImportFileError) as err:
        import_csv(engine, fix, FX, replace=True)
    assert "fix.csv: line 2: tencent/ap-beijing/GT4.4XLARGE96 on_demand would keep its stored tiers" in str(
        err.value.message
    )
    assert "tiers column" in err.value.hint
    with engine.connect() as conn:
        assert conn.execute(select(prices.c.price)).scalar_one() == Decimal("28.64")  # nothing changed
    # with the tiers column, the same correction goes through
    columns = [*IMPORT_REQUIRED_COLUMNS, "tiers"]
    with_tiers = write_csv(
        tmp_path / "fix2.csv", [price_row(price="286.4", tiers='"[[96, ""270""]]"')], columns
    )
    assert import_csv(engine, with_tiers, FX, replace=True).replaced == 1
