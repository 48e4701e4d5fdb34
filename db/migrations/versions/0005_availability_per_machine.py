"""availability.max_idle_gpus_per_machine and max_orderable_gpus_per_machine: a marketplace (AutoDL)
sums idle GPUs over its machines, but a job's GPUs are rented on one machine, so the most idle (and
orderable) GPUs on any one machine are stored beside the sums. Rows stored before stay NULL (not stated).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("availability") as batch:
        batch.add_column(sa.Column("max_idle_gpus_per_machine", sa.Integer()))
        batch.add_column(sa.Column("max_orderable_gpus_per_machine", sa.Integer()))


def downgrade() -> None:
    with op.batch_alter_table("availability") as batch:
        batch.drop_column("max_orderable_gpus_per_machine")
        batch.drop_column("max_idle_gpus_per_machine")
