"""The schema: migrations build exactly the models, the hot queries use indexes, history is append-only."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import inspect, text

from db import queries, store
from db.engine import current_revision, ensure_schema, make_engine
from db.schema import HEAD_REVISION, metadata


def test_migrations_build_exactly_the_models(engine):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    assert current_revision(engine) == HEAD_REVISION


def test_head_revision_constant_matches_alembic():
    from alembic.script import ScriptDirectory

    from db.engine import alembic_config

    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD_REVISION


@pytest.mark.unmigrated
def test_ensure_schema_runs_once(db_url):
    eng = make_engine(db_url)
    assert ensure_schema(eng) is True
    assert ensure_schema(eng) is False
    names = set(inspect(eng).get_table_names())
    assert {"scrape_runs", "instances", "prices", "alembic_version"} <= names
    eng.dispose()


def test_sqlite_is_in_wal_mode_with_a_busy_timeout(tmp_path):
    eng = make_engine(f"sqlite:///{tmp_path / 'deep' / 'dir' / 'p.db'}", busy_timeout_s=7)
    with eng.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 7000
    eng.dispose()


def _seed(engine, days: int = 3):
    with engine.begin() as conn:
        run = store.start_run(conn, "tencent", "refresh")
        ids = store.upsert_instances(
            conn, [store.InstanceRow("tencent", "ap-beijing", "GT4", "A100-40GB", 1)]
        )
        rows = [
            store.PriceRow(
                instance=("tencent", "ap-beijing", "GT4"),
                billing="on_demand",
                price=Decimal(20 + d),
                currency="CNY",
                unit="hour",
                cny_per_gpu_hour=Decimal(20 + d),
                observed_at=dt.datetime(2026, 10, 1 + d, 3),
            )
            for d in range(days)
        ]
        counts = store.insert_prices(conn, rows, ids, run)
        store.finish_run(conn, run, "ok", prices_stored=counts.stored)
    return counts


def test_same_day_observation_is_not_duplicated(engine):
    first = _seed(engine)
    assert (first.stored, first.changed) == (3, 2)
    again = _seed(engine)
    assert (again.stored, again.already_present) == (0, 3)
    with engine.connect() as conn:
        latest = queries.latest_prices(conn, ["A100-40GB"])
    assert len(latest) == 1 and latest[0].price == Decimal(22)


def test_latest_price_query_uses_the_indexes_on_sqlite(tmp_path):
    from sqlalchemy.dialects import sqlite

    eng = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    ensure_schema(eng)
    _seed(eng)
    with eng.connect() as conn:
        stmt = queries._latest_statement(["A100-40GB"], None, None, None)  # noqa: SLF001
        compiled = stmt.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True})
        plan = " | ".join(str(r[-1]) for r in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
    assert "uq_prices_instance_billing_day" in plan or "sqlite_autoindex_prices" in plan, plan
    assert "ix_instances_gpu_model" in plan, plan
    assert "SCAN prices" not in plan.replace("SCAN prices USING", ""), plan
    eng.dispose()


@pytest.mark.parametrize("bad", ["postgresql+psycopg://x@127.0.0.1:1/none"])
def test_storage_wraps_connection_errors(bad):
    from planner.config import load_config
    from planner.errors import DatabaseError
    from planner.storage import open_database

    with pytest.raises(DatabaseError) as err:
        open_database(load_config(env={}), bad)
    assert "cannot open database" in err.value.message
