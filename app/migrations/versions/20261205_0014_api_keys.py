"""api keys: the sales tools' keys (scopes, organisation, own rate limit, keyed hash) and the organisation a
quote was issued for

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 21:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.migrations import columns

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        columns.key(),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("organisation", sa.String(length=100), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("rate_limit_per_minute", sa.Integer(), nullable=False),
        columns.moment("created_at"),
        sa.Column("created_by", sa.String(length=254), nullable=False),
        columns.moment("expires_at", nullable=True),
        columns.moment("last_used_at", nullable=True),
        columns.moment("revoked_at", nullable=True),
        sa.CheckConstraint("rate_limit_per_minute > 0", name=op.f("ck_api_keys_rate_limit_positive")),
        columns.primary_key("api_keys"),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    op.create_index(op.f("ix_api_keys_organisation"), "api_keys", ["organisation"], unique=False)
    with op.batch_alter_table("quotes") as batch:
        batch.add_column(sa.Column("organisation", sa.String(length=100), nullable=True))
        batch.create_index("ix_quotes_organisation_created_at", ["organisation", "created_at", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("quotes") as batch:
        batch.drop_index("ix_quotes_organisation_created_at")
        batch.drop_column("organisation")
    op.drop_index(op.f("ix_api_keys_organisation"), table_name="api_keys")
    op.drop_table("api_keys")
