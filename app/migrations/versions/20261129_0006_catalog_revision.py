"""catalog revision token, replaced by every catalog write (per-process catalog caches check it)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29 22:30:00
"""

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.migrations import columns

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "catalog_revision",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("token", sa.String(length=32), nullable=False),
        columns.primary_key("catalog_revision"),
    )
    op.bulk_insert(table, [{"id": 1, "token": uuid.uuid4().hex}])


def downgrade() -> None:
    op.drop_table("catalog_revision")
