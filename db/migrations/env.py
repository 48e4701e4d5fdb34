"""Alembic environment: runs migrations on the connection planner hands over (see db.engine.upgrade),
or on ``sqlalchemy.url`` when Alembic's own command line is used."""

from alembic import context
from sqlalchemy import engine_from_config, pool

from db.schema import metadata

config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = engine_from_config(config.get_section(config.config_ini_section) or {}, poolclass=pool.NullPool)
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


run()
