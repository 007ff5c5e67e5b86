"""What a quote's change tells webhook receivers: one call, `emit`, in the transaction of the change
(app/quotes/service.py, app/quotes/expiry.py), writes the event to the outbox (app.webhooks)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from app.common.money import from_minor
from app.quotes.models import Quote
from app.webhooks import service as webhooks
from app.webhooks.models import EventType


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat().replace("+00:00", "Z")


def quote_data(quote: Quote) -> dict[str, Any]:
    """The quote as receivers see it: money as decimal strings in the quote's currency."""
    return {
        "id": quote.public_id,
        "number": quote.number,
        "status": quote.status,
        "currency": quote.currency,
        "subtotal": str(from_minor(quote.subtotal_minor, quote.currency)),
        "discount_total": str(from_minor(quote.discount_total_minor, quote.currency)),
        "total": str(from_minor(quote.total_minor, quote.currency)),
        "sku_id": quote.sku_slug,
        "quantity": quote.quantity,
        "term": quote.term,
        "months": quote.months,
        "valid_until": _iso(quote.valid_until),
        "accepted_at": _iso(quote.accepted_at),
        "cancelled_at": _iso(quote.cancelled_at),
        "customer": {
            "name": quote.customer_name,
            "company": quote.customer_company,
            "email": quote.customer_email,
        },
    }


def emit(session: Session, quote: Quote, event_type: EventType) -> None:
    webhooks.record_event(session, event_type=event_type, subject=quote.number, data=quote_data(quote))
