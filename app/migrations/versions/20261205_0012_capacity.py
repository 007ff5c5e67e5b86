"""capacity: maintenance holds and reservations; sku_availability.units_available now counts the units that exist

`sku_availability.units_available` keeps its name and values: what an admin set as the units free becomes the
inventory, the units that exist, and what is free at a date is derived from it less the holds (no quote held any
before this revision, so the figures mean the same on the day of the upgrade).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 21:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.migrations import columns

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "maintenance_holds",
        columns.key(),
        *columns.units_in_region_over_dates(),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        *columns.timestamps(),
        columns.version(),
        sa.CheckConstraint("ends_on > starts_on", name=op.f("ck_maintenance_holds_ends_after_start")),
        sa.CheckConstraint("units > 0", name=op.f("ck_maintenance_holds_units_positive")),
        columns.cascade("maintenance_holds", "sku_id", "skus"),
        columns.primary_key("maintenance_holds"),
        sa.UniqueConstraint("sku_id", "region", "starts_on", name=op.f("uq_maintenance_holds_sku_id")),
    )
    op.create_index("ix_maintenance_holds_sku_region", "maintenance_holds", ["sku_id", "region", "ends_on"])
    op.create_table(
        "reservations",
        columns.key(),
        sa.Column("quote_id", sa.Integer(), nullable=False),
        *columns.units_in_region_over_dates(),
        sa.Column("state", sa.String(length=16), nullable=False),
        columns.moment("held_until"),
        columns.moment("created_at"),
        sa.CheckConstraint("ends_on > starts_on", name=op.f("ck_reservations_ends_after_start")),
        sa.CheckConstraint("state IN ('held', 'confirmed', 'released')", name=op.f("ck_reservations_state")),
        sa.CheckConstraint("units > 0", name=op.f("ck_reservations_units_positive")),
        columns.cascade("reservations", "quote_id", "quotes"),
        columns.cascade("reservations", "sku_id", "skus"),
        columns.primary_key("reservations"),
        sa.UniqueConstraint("quote_id", name=op.f("uq_reservations_quote_id")),
    )
    op.create_index("ix_reservations_sku_region", "reservations", ["sku_id", "region", "ends_on"])


def downgrade() -> None:
    op.drop_index("ix_reservations_sku_region", table_name="reservations")
    op.drop_table("reservations")
    op.drop_index("ix_maintenance_holds_sku_region", table_name="maintenance_holds")
    op.drop_table("maintenance_holds")
