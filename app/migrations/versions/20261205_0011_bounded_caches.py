"""bounded caches: Hub configs keyed case-folded with misses, sizes and last use; one stored PDF per
quote and language, with its size and last use

Both tables are caches (a row is read from the Hub or rendered again when missing), so they are
recreated empty rather than converted: a config stored before was never checked against the bounds
the new rows pass, and old PDFs were one per status.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 18:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.migrations import columns

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_table("hub_configs")
    op.create_table(
        "hub_configs",
        columns.key(),
        sa.Column("hf_key", sa.String(length=193), nullable=False),
        sa.Column("revision", sa.String(length=100), nullable=False),
        sa.Column("config_json", sa.Text(), nullable=True),
        sa.Column("miss", sa.Text(), nullable=True),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        columns.moment("fetched_at"),
        columns.moment("used_at"),
        columns.moment("expires_at", nullable=True),
        columns.primary_key("hub_configs"),
        sa.UniqueConstraint("hf_key", "revision", name=op.f("uq_hub_configs_hf_key")),
    )
    op.create_index(op.f("ix_hub_configs_used_at"), "hub_configs", ["used_at"], unique=False)

    op.drop_index(op.f("ix_quote_documents_quote_id"), table_name="quote_documents")
    op.drop_table("quote_documents")
    op.create_table(
        "quote_documents",
        sa.Column("quote_id", sa.Integer(), nullable=False),
        sa.Column("lang", sa.String(length=8), nullable=False),
        sa.Column("html_sha256", sa.String(length=64), nullable=False),
        sa.Column("pdf", sa.LargeBinary(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        columns.moment("created_at"),
        columns.moment("used_at"),
        columns.cascade("quote_documents", "quote_id", "quotes"),
        sa.PrimaryKeyConstraint("quote_id", "lang", name=op.f("pk_quote_documents")),
    )
    op.create_index(op.f("ix_quote_documents_used_at"), "quote_documents", ["used_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_quote_documents_used_at"), table_name="quote_documents")
    op.drop_table("quote_documents")
    columns.quote_documents_0007()

    op.drop_index(op.f("ix_hub_configs_used_at"), table_name="hub_configs")
    op.drop_table("hub_configs")
    columns.hub_configs_0010()
