"""Webhook tables: the endpoints admins register, the outbox of events, one delivery per event and
endpoint, and the log of each delivery's attempts.

An event row is written in the transaction that changes the quote (the outbox), with the exact body that
is sent, so every retry and replay sends the same bytes under the same `webhook-id`. A delivery is claimed
by one worker for a lease (`claimed_until`, `claim_token`); a worker that dies gives it back when the lease
runs out. A paused endpoint's deliveries are written `held` and sent when it is resumed (app.webhooks.service
`update_endpoint`), so pausing loses no event. The endpoint's signing secret is kept as it is: signing needs
it (app/webhooks/signing.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base, TimestampMixin, UtcDateTime, one_of, utcnow

# The webhooks' words, declared here once (tests/test_vocabulary_places.py): the API models (app.webhooks.schemas), the
# admin pages and the quotes' outbox import them; the tuples, in the order declared, check the columns and list them.
EventType = Literal["quote.issued", "quote.accepted", "quote.cancelled", "quote.expired"]
# held: written for a paused endpoint, not sent; its resume makes them pending, due at once, oldest first.
DeliveryStatus = Literal["pending", "delivered", "failed", "held"]
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)
DELIVERY_STATUSES: tuple[DeliveryStatus, ...] = get_args(DeliveryStatus)


class WebhookEndpoint(TimestampMixin, Base):
    __tablename__ = "webhook_endpoints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[list[str]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(100))  # whsec_<base64>: shown once, never returned again
    description: Mapped[str] = mapped_column(String(200), default="")
    active: Mapped[bool] = mapped_column(Boolean, default=True)


class WebhookEvent(Base):
    __tablename__ = "webhook_events"
    __table_args__ = (one_of("type", EVENT_TYPES),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(64), unique=True)  # the `webhook-id` header: msg_<random>
    type: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(String(64), index=True)  # the quote number
    body: Mapped[str] = mapped_column(Text)  # the JSON sent, byte for byte
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, index=True)


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        one_of("status", DELIVERY_STATUSES),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("webhook_events.id", ondelete="CASCADE"), index=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    claimed_until: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    claim_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    replay_of: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the delivery an admin replayed
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, index=True)

    event: Mapped[WebhookEvent] = relationship(lazy="joined")
    endpoint: Mapped[WebhookEndpoint] = relationship(lazy="joined")


class WebhookAttempt(Base):
    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    duration_ms: Mapped[int] = mapped_column(Integer)
    error: Mapped[str] = mapped_column(String(300), default="")
    response_body: Mapped[str] = mapped_column(String(1024), default="")  # the first RESPONSE_KEEP_BYTES
