"""Webhook rules: endpoints (registered by admins), the outbox (`record_event`, called in the transaction
that changes a quote), claiming due deliveries, recording each attempt with its backoff, and replays.
Services take the session first and keyword-only arguments; they flush, never commit (the worker's own
units of work commit in app/webhooks/worker.py)."""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.common.errors import NotFound, refused
from app.db.base import utcnow
from app.webhooks import repository
from app.webhooks.addresses import check_url
from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from app.webhooks.schemas import (
    AttemptOut,
    DeliveryDetail,
    DeliveryOut,
    DeliveryPage,
    EndpointCreated,
    EndpointIn,
    EndpointOut,
    EndpointPatch,
    url_origin,
)
from app.webhooks.signing import new_message_id, new_secret

ERROR_KEEP_CHARS = 300
RESPONSE_KEEP_BYTES = 1024  # of each answer's body, in the delivery log


def aware(moment: datetime) -> datetime:
    """SQLite gives naive datetimes back: they are UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# --- endpoints -----------------------------------------------------------------------------------


def create_endpoint(session: Session, *, data: EndpointIn, allow_private: bool) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its secret (returned once; signing needs it, so it is kept, never shown again)."""
    check_url(data.url, allow_private=allow_private)
    secret = new_secret()
    row = WebhookEndpoint(
        url=data.url, events=list(data.events), secret=secret, description=data.description, active=data.active
    )
    repository.add(session, row)
    session.flush()
    return row, secret


def get_endpoint(session: Session, *, endpoint_id: int) -> WebhookEndpoint:
    row = repository.get_endpoint(session, endpoint_id)
    if row is None:
        raise refused(NotFound, "webhook_endpoint_unknown", field="endpoint_id", endpoint_id=endpoint_id)
    return row


def update_endpoint(session: Session, *, endpoint_id: int, data: EndpointPatch, allow_private: bool) -> WebhookEndpoint:
    row = get_endpoint(session, endpoint_id=endpoint_id)
    if data.url is not None:
        check_url(data.url, allow_private=allow_private)
        row.url = data.url
    if data.events is not None:
        row.events = list(data.events)
    if data.description is not None:
        row.description = data.description
    if data.active is not None and data.active != row.active:
        # Paused: its deliveries are held, not sent; resumed: the held ones are due at once, oldest first.
        repository.set_held(session, endpoint_id=row.id, held=not data.active, now=utcnow())
        row.active = data.active
    row.updated_at = utcnow()
    session.flush()
    return row


def list_endpoints(session: Session) -> Sequence[WebhookEndpoint]:
    return repository.list_endpoints(session)


def endpoint_out(row: WebhookEndpoint) -> EndpointOut:
    return EndpointOut(
        id=row.id,
        url_origin=url_origin(row.url),
        events=row.events,
        description=row.description,
        active=row.active,
        created_at=aware(row.created_at),
        updated_at=aware(row.updated_at),
    )


def endpoint_created(row: WebhookEndpoint, secret: str) -> EndpointCreated:
    return EndpointCreated(**endpoint_out(row).model_dump(), url=row.url, secret=secret)


def endpoint_snapshot(row: WebhookEndpoint) -> dict[str, Any]:
    """For the audit log: neither the secret nor the URL's path (it may carry the receiver's token)."""
    return {
        "url_origin": url_origin(row.url),
        "events": list(row.events),
        "description": row.description,
        "active": row.active,
    }


# --- the outbox ----------------------------------------------------------------------------------


def record_event(
    session: Session, *, event_type: str, subject: str, data: dict[str, Any], now: datetime | None = None
) -> WebhookEvent | None:
    """Write one event and a delivery to every endpoint that takes its type, in the caller's transaction:
    committed with the change it describes, or not at all. A paused endpoint's delivery is written `held`,
    sent when it is resumed (`update_endpoint`). Nothing when no endpoint takes it."""
    endpoints = [e for e in repository.list_endpoints(session) if event_type in e.events]
    if not endpoints:
        return None
    now = now or utcnow()
    body = {"type": event_type, "timestamp": now.isoformat().replace("+00:00", "Z"), "data": data}
    event = WebhookEvent(
        message_id=new_message_id(),
        type=event_type,
        subject=subject,
        body=json.dumps(body, separators=(",", ":"), ensure_ascii=False),
        created_at=now,
    )
    repository.add(session, event)
    for endpoint in endpoints:
        status = "pending" if endpoint.active else "held"
        repository.add(
            session,
            WebhookDelivery(event=event, endpoint=endpoint, status=status, next_attempt_at=now, created_at=now),
        )
    return event


# --- the delivery log ----------------------------------------------------------------------------


def delivery_out(row: WebhookDelivery) -> DeliveryOut:
    return DeliveryOut(
        id=row.id,
        endpoint_id=row.endpoint_id,
        event_type=row.event.type,
        message_id=row.event.message_id,
        quote_number=row.event.subject,
        status=row.status,
        attempts=row.attempts,
        next_attempt_at=aware(row.next_attempt_at) if row.status == "pending" else None,  # held: on resume
        last_status_code=row.last_status_code,
        delivered_at=aware(row.delivered_at) if row.delivered_at else None,
        created_at=aware(row.created_at),
        replay_of=row.replay_of,
    )


def list_deliveries(
    session: Session, *, endpoint_id: int | None = None, status: str | None = None, limit: int = 50, offset: int = 0
) -> DeliveryPage:
    rows, total = repository.deliveries(session, endpoint_id=endpoint_id, status=status, limit=limit, offset=offset)
    return DeliveryPage(items=[delivery_out(r) for r in rows], total=total, limit=limit, offset=offset)


def get_delivery(session: Session, *, delivery_id: int) -> WebhookDelivery:
    row = repository.get_delivery(session, delivery_id)
    if row is None:
        raise refused(NotFound, "webhook_delivery_unknown", field="delivery_id", delivery_id=delivery_id)
    return row


def delivery_detail(session: Session, *, delivery_id: int) -> DeliveryDetail:
    row = get_delivery(session, delivery_id=delivery_id)
    log = [AttemptOut.model_validate(a) for a in repository.attempts(session, row.id)]
    for attempt in log:
        attempt.at = aware(attempt.at)
    return DeliveryDetail(**delivery_out(row).model_dump(), body=row.event.body, log=log)


def replay(session: Session, *, delivery_id: int) -> WebhookDelivery:
    """Send an event to its endpoint again, as a new delivery (same body and `webhook-id`, so a receiver
    that already has it can tell), due now; the earlier delivery and its log stay as they are."""
    earlier = get_delivery(session, delivery_id=delivery_id)
    now = utcnow()
    status = "pending" if earlier.endpoint.active else "held"  # a paused endpoint gets it when resumed
    row = WebhookDelivery(
        event_id=earlier.event_id, endpoint_id=earlier.endpoint_id, status=status, next_attempt_at=now, created_at=now
    )
    row.replay_of = earlier.id
    repository.add(session, row)
    session.flush()
    return row


# --- the worker's steps --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """One claimed delivery, with all it needs to be sent without the database."""

    delivery_id: int
    token: str
    url: str
    secret: str
    message_id: str
    body: bytes
    attempt: int  # this attempt's number, from 1
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Outcome:
    status_code: int | None
    duration_ms: int
    error: str = ""
    response_body: str = ""

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


@dataclass(frozen=True, slots=True)
class Backoff:
    base_s: float
    cap_s: float
    retry_for_s: float


def claim(session: Session, *, lease_s: float, limit: int, now: datetime | None = None) -> list[Job]:
    now = now or utcnow()
    token = secrets.token_hex(16)
    ids = repository.claim_due(session, now=now, until=now + timedelta(seconds=lease_s), token=token, limit=limit)
    return [
        Job(
            delivery_id=row.id,
            token=token,
            url=row.endpoint.url,
            secret=row.endpoint.secret,
            message_id=row.event.message_id,
            body=row.event.body.encode(),
            attempt=row.attempts + 1,
            created_at=aware(row.created_at),
        )
        for row in repository.claimed(session, ids)
    ]


def retry_delay_s(attempt: int, backoff: Backoff, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: base × 2^(attempt-1), capped, then a random time between half of it
    and all of it (so receivers that failed together are not retried together)."""
    delay: float = min(backoff.cap_s, backoff.base_s * 2.0 ** min(attempt - 1, 32))
    jitter: float = (rng or random).uniform(0, delay / 2)
    return delay / 2 + jitter


def record_outcome(
    session: Session, *, job: Job, outcome: Outcome, backoff: Backoff, now: datetime | None = None
) -> WebhookDelivery | None:
    """Log the attempt and move the delivery on: delivered, due again after a backoff, or failed past
    `retry_for_s` (counted from its first attempt). A claim that was taken over (the lease ran out) only logs
    its attempt."""
    now = now or utcnow()
    repository.add(
        session,
        WebhookAttempt(
            delivery_id=job.delivery_id,
            at=now,
            status_code=outcome.status_code,
            duration_ms=outcome.duration_ms,
            error=outcome.error[:ERROR_KEEP_CHARS],
            response_body=outcome.response_body[:RESPONSE_KEEP_BYTES],
        ),
    )
    row = repository.get_delivery(session, job.delivery_id)
    if row is None or row.claim_token != job.token:
        return None
    row.attempts, row.last_status_code = job.attempt, outcome.status_code
    row.claimed_until, row.claim_token = None, None
    if outcome.ok:
        row.status, row.delivered_at = "delivered", now
    else:
        next_at = now + timedelta(seconds=retry_delay_s(job.attempt, backoff))
        # Retried for `retry_for_s` from its first attempt: a delivery held while its endpoint was paused gets
        # the whole window once it is resumed, however long the pause.
        first = repository.first_attempt_at(session, job.delivery_id)
        started = max(job.created_at, aware(first) if first is not None else now)
        if next_at > started + timedelta(seconds=backoff.retry_for_s):
            row.status = "failed"
        else:
            row.next_attempt_at = next_at
    session.flush()
    return row
