"""seeded SKU notes no longer restate prices or discounts (the catalog states them from the data)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 03:00:00

A note such as "Annual term 20% off (CNY 2,240 per card per month)" went stale with the first price
or discount change and was still served by GET /catalog/skus. The seeded notes are replaced where
they are still the seed's own words; a note an admin wrote is left alone.
"""

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# slug: (the seed's old note, the note without prices)
NOTES = {
    "a100-40g-pcie-card": ("Annual term 20% off (CNY 2,240 per card per month).", ""),
    "a100-80g-sxm-8x": (
        "List range CNY 25,000-35,000 per month; annual 15% off (20% via custom channel, about "
        "CNY 240,000 per year).",
        "The article's list range is CNY 25,000-35,000 per month; a custom channel may offer more off "
        "an annual term, on consultation.",
    ),
    "h100-80g-sxm-8x": (
        "List range CNY 80,000-120,000 per month; annual 15% off.",
        "The article's list range is CNY 80,000-120,000 per month.",
    ),
}
SKUS = sa.table("skus", sa.column("slug", sa.String), sa.column("notes", sa.Text))
REVISION = sa.table("catalog_revision", sa.column("id", sa.Integer), sa.column("token", sa.String))


def _replace(pick_old: int, pick_new: int) -> None:
    for slug, notes in NOTES.items():
        op.execute(
            SKUS.update()
            .where(SKUS.c.slug == slug, SKUS.c.notes == notes[pick_old])
            .values(notes=notes[pick_new])
        )
    op.execute(REVISION.update().where(REVISION.c.id == 1).values(token=uuid.uuid4().hex))


def upgrade() -> None:
    _replace(0, 1)


def downgrade() -> None:
    _replace(1, 0)
