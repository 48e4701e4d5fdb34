"""Reads of a test database: what prices are stored, and whether it is intact after a crash."""

from __future__ import annotations

import datetime as dt
import sqlite3

from sqlalchemy import func, select

from db.schema import availability, instances, prices, scrape_runs


def stored_by_provider(engine) -> dict[str, int]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(instances.c.provider, func.count())
            .select_from(prices.join(instances, instances.c.id == prices.c.instance_id))
            .group_by(instances.c.provider)
        )
        return dict(rows.all())


def stored(engine) -> set[tuple]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                instances.c.provider,
                instances.c.region,
                instances.c.instance_type,
                prices.c.billing,
                prices.c.observed_on,
                prices.c.price,
            ).select_from(prices.join(instances, instances.c.id == prices.c.instance_id))
        )
        return {tuple(r) for r in rows}


def last_seen(engine) -> list[tuple[str, dt.date]]:
    """(provider, day the price was last seen: first seen or confirmed) of every stored price level."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(instances.c.provider, prices.c.observed_at, prices.c.confirmed_at).select_from(
                prices.join(instances, instances.c.id == prices.c.instance_id)
            )
        ).all()
    return [(p, max(seen, confirmed or seen).date()) for p, seen, confirmed in rows]


def assert_intact(engine, db_url: str, before: set[tuple], where: str) -> set[tuple]:
    """The database is sound, nothing stored before is gone, no run is half stored; returns the prices."""
    if db_url.startswith("sqlite"):
        path = db_url.removeprefix("sqlite:///")
        con = sqlite3.connect(path)
        try:
            assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)], where
            assert con.execute("PRAGMA foreign_key_check").fetchall() == [], where
        finally:
            con.close()
    after = stored(engine)
    missing = before - after
    assert not missing, f"{where}: {len(missing)} price(s) stored before are gone, e.g. {sorted(missing)[:3]}"
    with engine.connect() as conn:
        per_run = dict(conn.execute(select(prices.c.run_id, func.count()).group_by(prices.c.run_id)).all())
        stock = dict(
            conn.execute(select(availability.c.run_id, func.count()).group_by(availability.c.run_id)).all()
        )
        runs = conn.execute(select(scrape_runs.c.id, scrape_runs.c.status, scrape_runs.c.prices_stored)).all()
    for run_id, status, counted in runs:
        held = per_run.get(run_id, 0)
        if status in ("ok", "partial"):
            assert held == counted, f"{where}: run {run_id} ({status}) counts {counted} prices, holds {held}"
        else:
            assert held == 0 and stock.get(run_id, 0) == 0, f"{where}: run {run_id} ({status}) holds {held}"
    assert set(per_run) <= {r[0] for r in runs}, f"{where}: prices of a run that does not exist"
    return after
