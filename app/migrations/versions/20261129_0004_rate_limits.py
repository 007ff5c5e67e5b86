"""rate limit counters

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 20:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('rate_limit_counters',
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('window_start', sa.BigInteger(), nullable=False),
    sa.Column('hits', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_rate_limit_counters'))
    )


def downgrade() -> None:
    op.drop_table('rate_limit_counters')
