"""quote documents: each quote PDF rendered once and kept

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 02:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

from app.migrations import columns

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    columns.quote_documents_0007()


def downgrade() -> None:
    op.drop_index(op.f("ix_quote_documents_quote_id"), table_name="quote_documents")
    op.drop_table("quote_documents")
