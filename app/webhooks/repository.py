"""Webhook queries: the only SQL of app.webhooks. Claiming due deliveries is the one place the two
databases differ: PostgreSQL locks the rows it takes with `FOR UPDATE SKIP LOCKED`, so workers in
several processes never wait on one another nor take the same row; SQLite has one writer at a time, and
a single UPDATE claims the rows under its write lock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.orm import Session

from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent


def add(session: Session, row: object) -> None:
    session.add(row)


def list_endpoints(session: Session) -> Sequence[WebhookEndpoint]:
    return session.scalars(select(WebhookEndpoint).order_by(WebhookEndpoint.id)).all()


def get_endpoint(session: Session, endpoint_id: int) -> WebhookEndpoint | None:
    return session.get(WebhookEndpoint, endpoint_id)


def set_held(session: Session, *, endpoint_id: int, held: bool, now: datetime) -> None:
    """Pause (pending → held) or resume (held → pending, due `now`) an endpoint's deliveries. A delivery in
    flight when it is paused is recorded as usual: delivered, or held again until the resume."""
    if held:
        change = update(WebhookDelivery).where(WebhookDelivery.status == "pending").values(status="held")
    else:
        change = (
            update(WebhookDelivery)
            .where(WebhookDelivery.status == "held")
            .values(status="pending", next_attempt_at=now)
        )
    session.execute(
        change.where(WebhookDelivery.endpoint_id == endpoint_id), execution_options={"synchronize_session": False}
    )


def get_delivery(session: Session, delivery_id: int) -> WebhookDelivery | None:
    return session.get(WebhookDelivery, delivery_id)


def deliveries(
    session: Session, *, endpoint_id: int | None, status: str | None, limit: int, offset: int
) -> tuple[Sequence[WebhookDelivery], int]:
    conditions = []
    if endpoint_id is not None:
        conditions.append(WebhookDelivery.endpoint_id == endpoint_id)
    if status is not None:
        conditions.append(WebhookDelivery.status == status)
    where = and_(True, *conditions)
    total = session.scalar(select(func.count()).select_from(WebhookDelivery).where(where)) or 0
    query = select(WebhookDelivery).where(where).order_by(WebhookDelivery.id.desc()).limit(limit).offset(offset)
    return session.scalars(query).all(), total


def attempts(session: Session, delivery_id: int) -> Sequence[WebhookAttempt]:
    query = select(WebhookAttempt).where(WebhookAttempt.delivery_id == delivery_id).order_by(WebhookAttempt.id)
    return session.scalars(query).all()


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(
        WebhookDelivery.status == "pending",
        WebhookDelivery.next_attempt_at <= now,
        or_(WebhookDelivery.claimed_until.is_(None), WebhookDelivery.claimed_until < now),
    )


def claim_due(session: Session, *, now: datetime, until: datetime, token: str, limit: int) -> list[int]:
    """Mark at most `limit` due deliveries as this worker's (`token`) until `until`; their ids."""
    due = _due(now)
    if session.get_bind().dialect.name == "postgresql":
        ids = list(
            session.scalars(
                select(WebhookDelivery.id)
                .where(due)
                .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
        )
        if not ids:
            return []
        where: ColumnElement[bool] = WebhookDelivery.id.in_(ids)
    else:
        # A read first: an idle worker then never takes SQLite's write lock (one writer for the whole file).
        if session.scalar(select(WebhookDelivery.id).where(due).limit(1)) is None:
            return []
        # One statement: SQLite runs it under its write lock, so two processes never claim one row.
        candidates = select(WebhookDelivery.id).where(due).order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
        candidates = candidates.limit(limit)
        where = and_(WebhookDelivery.id.in_(candidates.scalar_subquery()), due)
    session.execute(
        update(WebhookDelivery).where(where).values(claimed_until=until, claim_token=token),
        execution_options={"synchronize_session": False},
    )
    claimed_ids = select(WebhookDelivery.id).where(WebhookDelivery.claim_token == token).order_by(WebhookDelivery.id)
    return list(session.scalars(claimed_ids))


def claimed(session: Session, ids: list[int]) -> Sequence[WebhookDelivery]:
    return session.scalars(
        select(WebhookDelivery).where(WebhookDelivery.id.in_(ids)).order_by(WebhookDelivery.id)
    ).all()


def event_for(session: Session, message_id: str) -> WebhookEvent | None:
    return session.scalar(select(WebhookEvent).where(WebhookEvent.message_id == message_id))


def first_attempt_at(session: Session, delivery_id: int) -> datetime | None:
    return session.scalar(select(func.min(WebhookAttempt.at)).where(WebhookAttempt.delivery_id == delivery_id))
