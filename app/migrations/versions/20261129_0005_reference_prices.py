"""reference prices of comparable cloud instances and exchange rates

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 20:12:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.migrations import columns

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reference_prices",
        columns.key(),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("region", sa.String(length=100), nullable=False),
        sa.Column("instance_type", sa.String(length=100), nullable=False),
        sa.Column("gpu_model", sa.String(length=64), nullable=False),
        sa.Column("gpu_variant", sa.String(length=64), nullable=False),
        sa.Column("gpu_memory_gb", sa.Integer(), nullable=False),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("hourly_micros", sa.BigInteger(), nullable=False),
        sa.Column("pricing_type", sa.String(length=64), nullable=False),
        sa.Column("data_date", sa.Text(), nullable=False),
        sa.Column("confidence", sa.String(length=16), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        columns.moment("created_at"),
        sa.CheckConstraint("gpu_count > 0", name=op.f("ck_reference_prices_gpu_count_positive")),
        sa.CheckConstraint("hourly_micros > 0", name=op.f("ck_reference_prices_hourly_positive")),
        columns.primary_key("reference_prices"),
        sa.UniqueConstraint("provider", "region", "instance_type", name=op.f("uq_reference_prices_provider")),
    )
    op.create_table(
        "exchange_rates",
        columns.key(),
        sa.Column("base", sa.String(length=3), nullable=False),
        sa.Column("quote", sa.String(length=3), nullable=False),
        sa.Column("rate_micros", sa.BigInteger(), nullable=False),
        columns.moment("effective_from"),
        sa.Column("set_by", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.CheckConstraint("rate_micros > 0", name=op.f("ck_exchange_rates_rate_positive")),
        columns.primary_key("exchange_rates"),
    )


def downgrade() -> None:
    op.drop_table("exchange_rates")
    op.drop_table("reference_prices")
