"""Availability per run, AutoDL's median listing, and richer run rows.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("scrape_runs") as batch:
        batch.add_column(sa.Column("mode", sa.String(16)))
        batch.add_column(sa.Column("offers_skipped", sa.Integer()))
        batch.add_column(sa.Column("prices_flagged", sa.Integer()))
        batch.add_column(sa.Column("notes", sa.Text()))
    with op.batch_alter_table("prices") as batch:
        batch.add_column(sa.Column("median_price", sa.Numeric(18, 6)))
    op.create_table(
        "availability",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("instance_id", sa.Integer(), sa.ForeignKey("instances.id"), nullable=False),
        sa.Column("billing", sa.String(16), nullable=False),
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("scrape_runs.id"), nullable=False),
        sa.Column("observed_at", sa.DateTime(), nullable=False),
        sa.Column("observed_on", sa.Date(), nullable=False),
        sa.Column("stock_status", sa.String(16)),
        sa.Column("idle_gpus", sa.Integer()),
        sa.Column("total_gpus", sa.Integer()),
        sa.UniqueConstraint(
            "instance_id", "billing", "run_id", name="uq_availability_instance_billing_run"
        ),
    )
    op.create_index("ix_availability_instance_day", "availability", ["instance_id", "observed_on"])


def downgrade() -> None:
    op.drop_table("availability")
    with op.batch_alter_table("prices") as batch:
        batch.drop_column("median_price")
    with op.batch_alter_table("scrape_runs") as batch:
        batch.drop_column("notes")
        batch.drop_column("prices_flagged")
        batch.drop_column("offers_skipped")
        batch.drop_column("mode")
