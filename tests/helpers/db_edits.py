"""Edits to a test database that stand for time passing or data written by an older version."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, update

from db.schema import availability, prices


def age_everything(engine, days: int = 1) -> None:
    """Move every stored observation ``days`` back, as if the last refresh ran that long ago."""
    with engine.begin() as conn:
        for table in (prices, availability):
            for day in conn.execute(select(table.c.observed_on).distinct()).scalars().all():
                conn.execute(
                    update(table)
                    .where(table.c.observed_on == day)
                    .values(observed_on=day - dt.timedelta(days=days))
                )
            moment = dt.datetime.combine(dt.date.today() - dt.timedelta(days=days), dt.time(2))
            conn.execute(update(table).values(observed_at=moment))


def age(engine, days: int = 1) -> None:
    """Move every observation ``days`` back, oldest day first (one transaction), as if a night passed."""
    with engine.begin() as conn:
        for table in (prices, availability):
            for day in sorted(conn.execute(select(table.c.observed_on).distinct()).scalars()):
                moved = day - dt.timedelta(days=days)
                at = dt.datetime.combine(moved, dt.time(2))
                conn.execute(
                    update(table).where(table.c.observed_on == day).values(observed_on=moved, observed_at=at)
                )
        _age_confirmations(conn, days)


def _age_confirmations(conn, days: int) -> None:  # noqa: ANN001 - a SQLAlchemy connection
    """Move every price's last confirmation ``days`` back too (in Python: date arithmetic in SQL differs
    between SQLite and PostgreSQL)."""
    found = conn.execute(select(prices.c.id, prices.c.confirmed_at).where(prices.c.confirmed_at.is_not(None)))
    for price_id, confirmed in found.all():
        moved = confirmed - dt.timedelta(days=days)
        conn.execute(update(prices).where(prices.c.id == price_id).values(confirmed_at=moved))


def rename_instances(db_url: str, names: dict[str, str]) -> None:
    """Give stored instances names an import refuses (a database written before it refused them)."""
    from sqlalchemy import update

    from db.engine import make_engine
    from db.schema import instances

    engine = make_engine(db_url)
    with engine.begin() as conn:
        for old, new in names.items():
            conn.execute(update(instances).where(instances.c.instance_type == old).values(instance_type=new))
    engine.dispose()
