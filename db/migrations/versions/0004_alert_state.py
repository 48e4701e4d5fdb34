"""Alert state: which offers hold each alert rule, and which channels still owe the message.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert_state",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("offer_key", sa.String(320), nullable=False),
        sa.Column("holding", sa.Boolean(), nullable=False),
        sa.Column("holding_since", sa.DateTime(), nullable=False),
        sa.Column("fired_at", sa.DateTime(), nullable=False),
        sa.Column("pending", sa.Text(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.UniqueConstraint("rule", "offer_key", name="uq_alert_state_rule_offer"),
    )


def downgrade() -> None:
    op.drop_table("alert_state")
