"""availability.orderable_gpus: GPUs that can be ordered now (AutoDL gpu_order_num), beside idle_gpus.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("availability") as batch:
        batch.add_column(sa.Column("orderable_gpus", sa.Integer()))


def downgrade() -> None:
    with op.batch_alter_table("availability") as batch:
        batch.drop_column("orderable_gpus")
