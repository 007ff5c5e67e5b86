"""idempotency keys scoped by organisation (a UNIQUE over (idempotency_scope, idempotency_key)); webhook
deliveries to a paused endpoint are kept as `held`

Revision ID: 0017
Revises: 0015
Create Date: 2026-12-05 23:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUOTES = sa.table("quotes", sa.column("organisation", sa.String), sa.column("idempotency_scope", sa.String))
DELIVERIES = sa.table("webhook_deliveries", sa.column("status", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("quotes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("idempotency_scope", sa.String(length=100), nullable=False, server_default=""))
    # A key used with an API key belongs to its organisation from now on; without one, to the anonymous scope "".
    op.execute(
        QUOTES.update().where(QUOTES.c.organisation.is_not(None)).values(idempotency_scope=QUOTES.c.organisation)
    )
    with op.batch_alter_table("quotes", schema=None) as batch_op:
        batch_op.alter_column("idempotency_scope", server_default=None)
        batch_op.drop_constraint(op.f("uq_quotes_idempotency_key"), type_="unique")
        batch_op.create_unique_constraint(
            op.f("uq_quotes_idempotency_scope"), ["idempotency_scope", "idempotency_key"]
        )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_webhook_deliveries_status"), type_="check")
        batch_op.create_check_constraint(
            op.f("ck_webhook_deliveries_status"), "status IN ('pending', 'delivered', 'failed', 'held')"
        )


def downgrade() -> None:
    # Held deliveries go back to pending (sent to the endpoint even while paused, as before this revision).
    op.execute(DELIVERIES.update().where(DELIVERIES.c.status == "held").values(status="pending"))
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_webhook_deliveries_status"), type_="check")
        batch_op.create_check_constraint(
            op.f("ck_webhook_deliveries_status"), "status IN ('pending', 'delivered', 'failed')"
        )
    # Fails if two organisations used one key since the upgrade: a global key cannot hold both.
    with op.batch_alter_table("quotes", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_quotes_idempotency_scope"), type_="unique")
        batch_op.create_unique_constraint(op.f("uq_quotes_idempotency_key"), ["idempotency_key"])
        batch_op.drop_column("idempotency_scope")
