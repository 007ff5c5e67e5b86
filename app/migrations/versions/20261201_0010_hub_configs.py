"""hub_configs: config.json of models named by their Hugging Face id, per revision

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 05:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

from app.migrations import columns

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    columns.hub_configs_0010()


def downgrade() -> None:
    op.drop_table("hub_configs")
