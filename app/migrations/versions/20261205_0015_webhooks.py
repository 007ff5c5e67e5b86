"""webhooks: endpoints admins register, the outbox of quote events, one delivery per event and endpoint
(claimed with a lease), and each delivery's attempts

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 21:36:10.518648
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.migrations import columns

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('webhook_endpoints',
    columns.key(),
    sa.Column('url', sa.String(length=2000), nullable=False),
    sa.Column('events', sa.JSON(), nullable=False),
    sa.Column('secret', sa.String(length=100), nullable=False),
    sa.Column('description', sa.String(length=200), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    *columns.timestamps(),
    columns.primary_key("webhook_endpoints")
    )
    op.create_table('webhook_events',
    columns.key(),
    sa.Column('message_id', sa.String(length=64), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('subject', sa.String(length=64), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    columns.moment("created_at"),
    sa.CheckConstraint("type IN ('quote.issued', 'quote.accepted', 'quote.cancelled', 'quote.expired')", name=op.f('ck_webhook_events_type')),
    columns.primary_key("webhook_events"),
    sa.UniqueConstraint('message_id', name=op.f('uq_webhook_events_message_id'))
    )
    columns.index_columns('webhook_events', 'created_at', 'subject')

    op.create_table('webhook_deliveries',
    columns.key(),
    sa.Column('event_id', sa.Integer(), nullable=False),
    sa.Column('endpoint_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    columns.moment("next_attempt_at"),
    columns.moment("claimed_until", nullable=True),
    sa.Column('claim_token', sa.String(length=32), nullable=True),
    sa.Column('replay_of', sa.Integer(), nullable=True),
    sa.Column('last_status_code', sa.Integer(), nullable=True),
    columns.moment("delivered_at", nullable=True),
    columns.moment("created_at"),
    sa.CheckConstraint("status IN ('pending', 'delivered', 'failed')", name=op.f('ck_webhook_deliveries_status')),
    columns.cascade("webhook_deliveries", "endpoint_id", "webhook_endpoints"),
    columns.cascade("webhook_deliveries", "event_id", "webhook_events"),
    columns.primary_key("webhook_deliveries")
    )
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_created_at'), ['created_at'], unique=False)
        batch_op.create_index('ix_webhook_deliveries_due', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_endpoint_id'), ['endpoint_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_event_id'), ['event_id'], unique=False)

    op.create_table('webhook_attempts',
    columns.key(),
    sa.Column('delivery_id', sa.Integer(), nullable=False),
    columns.moment("at"),
    sa.Column('status_code', sa.Integer(), nullable=True),
    sa.Column('duration_ms', sa.Integer(), nullable=False),
    sa.Column('error', sa.String(length=300), nullable=False),
    sa.Column('response_body', sa.String(length=1024), nullable=False),
    columns.cascade("webhook_attempts", "delivery_id", "webhook_deliveries"),
    columns.primary_key("webhook_attempts")
    )
    columns.index_columns('webhook_attempts', 'delivery_id')



def downgrade() -> None:
    columns.drop_indexed_table('webhook_attempts', op.f('ix_webhook_attempts_delivery_id'))
    columns.drop_indexed_table('webhook_deliveries', op.f('ix_webhook_deliveries_event_id'), op.f('ix_webhook_deliveries_endpoint_id'), 'ix_webhook_deliveries_due', op.f('ix_webhook_deliveries_created_at'))
    columns.drop_indexed_table('webhook_events', op.f('ix_webhook_events_subject'), op.f('ix_webhook_events_created_at'))
    op.drop_table('webhook_endpoints')
