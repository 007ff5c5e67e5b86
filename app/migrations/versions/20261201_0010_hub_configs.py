"""hub_configs: config.json of models named by their Hugging Face id, per revision

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 05:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hub_configs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hf_id", sa.String(length=193), nullable=False),
        sa.Column("revision", sa.String(length=100), nullable=False),
        sa.Column("config_json", sa.Text(), nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hub_configs")),
        sa.UniqueConstraint("hf_id", "revision", name=op.f("uq_hub_configs_hf_id")),
    )


def downgrade() -> None:
    op.drop_table("hub_configs")
