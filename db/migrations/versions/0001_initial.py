"""Initial schema: scrape_runs, instances, prices.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scrape_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("provider", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime()),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("offers_seen", sa.Integer(), nullable=False),
        sa.Column("prices_stored", sa.Integer(), nullable=False),
        sa.Column("prices_changed", sa.Integer(), nullable=False),
        sa.Column("unknown_gpus", sa.Text()),
        sa.Column("error", sa.Text()),
        sa.Column("source", sa.Text()),
    )
    op.create_index("ix_scrape_runs_provider_started", "scrape_runs", ["provider", "started_at"])
    op.create_table(
        "instances",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("provider", sa.String(32), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Float(), nullable=False),
        sa.Column("vcpus", sa.Integer()),
        sa.Column("memory_gb", sa.Float()),
        sa.Column("gpu_note", sa.Text()),
        sa.UniqueConstraint("provider", "region", "instance_type", name="uq_instances_provider_region_type"),
    )
    op.create_index("ix_instances_gpu_model", "instances", ["gpu_model"])
    op.create_table(
        "prices",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("instance_id", sa.Integer(), sa.ForeignKey("instances.id"), nullable=False),
        sa.Column("billing", sa.String(16), nullable=False),
        sa.Column("price", sa.Numeric(18, 6), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("unit", sa.String(8), nullable=False),
        sa.Column("cny_per_gpu_hour", sa.Numeric(18, 6), nullable=False),
        sa.Column("tiers", sa.Text()),
        sa.Column("observed_at", sa.DateTime(), nullable=False),
        sa.Column("observed_on", sa.Date(), nullable=False),
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("scrape_runs.id"), nullable=False),
        sa.Column("source", sa.Text()),
        sa.UniqueConstraint("instance_id", "billing", "observed_on", name="uq_prices_instance_billing_day"),
    )
    op.create_index("ix_prices_observed_on", "prices", ["observed_on"])


def downgrade() -> None:
    op.drop_table("prices")
    op.drop_table("instances")
    op.drop_table("scrape_runs")
