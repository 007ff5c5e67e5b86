"""quote documents: each quote PDF rendered once and kept

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 02:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "quote_documents",
        sa.Column("html_sha256", sa.String(length=64), nullable=False),
        sa.Column("quote_id", sa.Integer(), nullable=False),
        sa.Column("pdf", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["quote_id"], ["quotes.id"], name=op.f("fk_quote_documents_quote_id_quotes"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("html_sha256", name=op.f("pk_quote_documents")),
    )
    op.create_index(op.f("ix_quote_documents_quote_id"), "quote_documents", ["quote_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_quote_documents_quote_id"), table_name="quote_documents")
    op.drop_table("quote_documents")
