"""Prices: when each was last confirmed, and when its provider stopped listing it; run offers: the price
each run listed (alerts compare runs, not days).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("prices") as batch:
        batch.add_column(sa.Column("confirmed_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("unlisted_at", sa.DateTime(), nullable=True))
    with op.batch_alter_table("run_offers") as batch:
        batch.add_column(sa.Column("cny_per_gpu_hour", sa.Numeric(18, 6), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run_offers") as batch:
        batch.drop_column("cny_per_gpu_hour")
    with op.batch_alter_table("prices") as batch:
        batch.drop_column("unlisted_at")
        batch.drop_column("confirmed_at")
