"""The admin JSON API for webhooks: endpoints (the secret in the creation's answer only), the delivery log
and replays. Thin routes over app/admin/webhooks.py and app.webhooks.service."""

from __future__ import annotations

from typing import Annotated

from fastapi import Body, Path, Query, Response
from fastapi.openapi.models import Example
from sqlalchemy.orm import Session

from app.admin import webhooks as admin_webhooks
from app.admin.api import admin_api_router
from app.admin.deps import NO_STORE, ROW_ID_MAX, AdminDep, Principal
from app.common.settings import Settings
from app.delivery.deps import SessionDep, SettingsDep
from app.webhooks import schemas as hooks, service
from app.webhooks.models import DeliveryStatus

router = admin_api_router("/admin/api/webhooks")
# INTEGER ids: a larger one names no row (and PostgreSQL refuses to compare it)
EndpointId = Annotated[int, Path(ge=1, le=ROW_ID_MAX, description="The endpoint's id", examples=[1])]
DeliveryId = Annotated[int, Path(ge=1, le=ROW_ID_MAX, description="The delivery's id", examples=[1])]
ENDPOINT_EXAMPLE = {
    "example": Example(
        summary="A CRM told of issued and accepted quotes, registered paused (an IP address, so that the example "
        "runs without DNS; a host name works the same)",
        value={
            "url": "https://93.184.215.14/hooks/gpu-sizer",
            "events": ["quote.issued", "quote.accepted"],
            "description": "CRM",
            "active": False,
        },
    )
}


@router.get("", summary="Webhook endpoints (their secrets and full URLs were shown once, at creation)")
def list_endpoints(session: SessionDep) -> list[hooks.EndpointOut]:
    return [service.endpoint_out(row) for row in service.list_endpoints(session)]


@router.post(
    "",
    status_code=201,
    summary="Register an endpoint; the answer carries its signing secret, shown this once",
    responses={422: {"description": "A URL to a private, loopback or link-local address, or bad input"}},
)
def create_endpoint(
    body: Annotated[hooks.EndpointIn, Body(openapi_examples=ENDPOINT_EXAMPLE)],
    session: SessionDep,
    admin: AdminDep,
    settings: SettingsDep,
    response: Response,
) -> hooks.EndpointCreated:
    row, secret = admin_webhooks.create_endpoint(
        session, data=body, actor=admin.actor, allow_private=settings.webhooks_allow_private
    )
    response.headers.update(NO_STORE)
    return service.endpoint_created(row, secret)


@router.get("/deliveries", summary="Deliveries, newest first, with their status")
def list_deliveries(
    session: SessionDep,
    endpoint_id: Annotated[int | None, Query(ge=1, le=ROW_ID_MAX)] = None,
    status: Annotated[DeliveryStatus | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> hooks.DeliveryPage:
    return service.list_deliveries(session, endpoint_id=endpoint_id, status=status, limit=limit, offset=offset)


@router.get("/deliveries/{delivery_id}", summary="One delivery: the body sent and every attempt")
def get_delivery(delivery_id: DeliveryId, session: SessionDep) -> hooks.DeliveryDetail:
    return service.delivery_detail(session, delivery_id=delivery_id)


@router.post(
    "/deliveries/{delivery_id}/replay",
    status_code=201,
    summary="Send a delivery's event to its endpoint again, as a new delivery due now",
)
def replay_delivery(delivery_id: DeliveryId, session: SessionDep, admin: AdminDep) -> hooks.DeliveryOut:
    return service.delivery_out(admin_webhooks.replay(session, delivery_id=delivery_id, actor=admin.actor))


@router.get("/{endpoint_id}", summary="One endpoint")
def get_endpoint(endpoint_id: EndpointId, session: SessionDep) -> hooks.EndpointOut:
    return service.endpoint_out(service.get_endpoint(session, endpoint_id=endpoint_id))


@router.post("/{endpoint_id}/pause", summary="Stop sending new events to an endpoint (audited)")
def pause_endpoint(
    endpoint_id: EndpointId, session: SessionDep, admin: AdminDep, settings: SettingsDep
) -> hooks.EndpointOut:
    return _set_active(session, endpoint_id, admin, settings, active=False)


@router.post("/{endpoint_id}/resume", summary="Send events to a paused endpoint again (audited)")
def resume_endpoint(
    endpoint_id: EndpointId, session: SessionDep, admin: AdminDep, settings: SettingsDep
) -> hooks.EndpointOut:
    return _set_active(session, endpoint_id, admin, settings, active=True)


def _set_active(
    session: Session, endpoint_id: int, admin: Principal, settings: Settings, *, active: bool
) -> hooks.EndpointOut:
    row = admin_webhooks.update_endpoint(
        session,
        endpoint_id=endpoint_id,
        data=hooks.EndpointPatch(active=active),
        actor=admin.actor,
        allow_private=settings.webhooks_allow_private,
    )
    return service.endpoint_out(row)
