"""Run offers: which offers each of a provider's last refresh runs listed, for alerts that compare runs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_offers",
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("scrape_runs.id"), nullable=False),
        sa.Column("instance_id", sa.Integer(), sa.ForeignKey("instances.id"), nullable=False),
        sa.Column("billing", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "instance_id", "billing", name="pk_run_offers"),
    )


def downgrade() -> None:
    op.drop_table("run_offers")
