"""Quotes past their validity: an issued quote counts as expired on every read once `valid_until`
passes (app.quotes.service.effective_status); this sweep also stores it as expired and writes its
`quote.expired` event, in one transaction. Run by the webhook worker every WEBHOOKS_EXPIRY_SWEEP_S."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from app.db.base import utcnow
from app.quotes import events, repository, reservations

SWEEP_BATCH = 200  # quotes per transaction; the rest wait for the next sweep


def expire_due(session: Session, *, now: datetime | None = None, limit: int = SWEEP_BATCH) -> int:
    """Mark issued quotes past their validity expired, each with its event; how many it marked."""
    now = now or utcnow()
    count = 0
    for quote in repository.expirable(session, now=now, limit=limit):
        if repository.mark_expired(session, quote_id=quote.id, now=now):
            quote.status = "expired"  # as stored: the event carries it
            reservations.release(session, quote)  # its hold already ended at valid_until; the row says so too
            events.emit(session, quote, "quote.expired")
            count += 1
    session.flush()
    return count
