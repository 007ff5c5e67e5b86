"""Webhook endpoints and replays as admin actions: the webhooks service's rules, each change recorded in the
audit log (the JSON API and the pages both call these). The audit keeps what an endpoint is, never its
secret nor its URL's path."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.admin.service import Actor, record
from app.webhooks import service as webhooks
from app.webhooks.models import WebhookDelivery, WebhookEndpoint
from app.webhooks.schemas import EndpointIn, EndpointPatch


def create_endpoint(
    session: Session, *, data: EndpointIn, actor: Actor, allow_private: bool
) -> tuple[WebhookEndpoint, str]:
    row, secret = webhooks.create_endpoint(session, data=data, allow_private=allow_private)
    _record_endpoint(session, actor, "webhook.create", row, before=None, after=webhooks.endpoint_snapshot(row))
    return row, secret


def update_endpoint(
    session: Session, *, endpoint_id: int, data: EndpointPatch, actor: Actor, allow_private: bool
) -> WebhookEndpoint:
    before = webhooks.endpoint_snapshot(webhooks.get_endpoint(session, endpoint_id=endpoint_id))
    row = webhooks.update_endpoint(session, endpoint_id=endpoint_id, data=data, allow_private=allow_private)
    after = webhooks.endpoint_snapshot(row)
    if data.url is not None:
        after["url_changed"] = True  # the path is not recorded; that it changed is
    _record_endpoint(session, actor, "webhook.update", row, before=before, after=after)
    return row


def _record_endpoint(
    session: Session,
    actor: Actor,
    action: str,
    row: WebhookEndpoint,
    *,
    before: dict[str, Any] | None,
    after: dict[str, Any],
) -> None:
    """An endpoint's change in the audit log."""
    record(
        session, actor=actor, action=action, entity_type="webhook", entity_id=str(row.id), before=before, after=after
    )


def replay(session: Session, *, delivery_id: int, actor: Actor) -> WebhookDelivery:
    row = webhooks.replay(session, delivery_id=delivery_id)
    record(
        session,
        actor=actor,
        action="webhook.replay",
        entity_type="webhook_delivery",
        entity_id=str(row.id),
        before=None,
        after={"replay_of": row.replay_of, "endpoint_id": row.endpoint_id},
    )
    return row
