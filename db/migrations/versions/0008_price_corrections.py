"""Price corrections: the whole stored row each `import --replace` replaced, so no corrected price is lost.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "price_corrections",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("price_id", sa.Integer(), sa.ForeignKey("prices.id"), nullable=False),
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("scrape_runs.id"), nullable=False),
        sa.Column("replaced_run_id", sa.Integer(), sa.ForeignKey("scrape_runs.id"), nullable=False),
        sa.Column("instance_id", sa.Integer(), sa.ForeignKey("instances.id"), nullable=False),
        sa.Column("billing", sa.String(16), nullable=False),
        sa.Column("observed_on", sa.Date(), nullable=False),
        sa.Column("price", sa.Numeric(18, 6), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("unit", sa.String(8), nullable=False),
        sa.Column("cny_per_gpu_hour", sa.Numeric(18, 6), nullable=False),
        sa.Column("tiers", sa.Text(), nullable=True),
        sa.Column("observed_at", sa.DateTime(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("median_price", sa.Numeric(18, 6), nullable=True),
        sa.Column("confirmed_at", sa.DateTime(), nullable=True),
        sa.Column("unlisted_at", sa.DateTime(), nullable=True),
    )
    op.create_index(
        "ix_price_corrections_series", "price_corrections", ["instance_id", "billing", "observed_on"]
    )
    op.create_index("ix_price_corrections_run", "price_corrections", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_price_corrections_run", table_name="price_corrections")
    op.drop_index("ix_price_corrections_series", table_name="price_corrections")
    op.drop_table("price_corrections")
