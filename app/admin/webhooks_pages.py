"""The admin's webhook pages: endpoints (register, pause, resume), the delivery log with each attempt,
and replay. Server-rendered like app/admin/pages.py, over app/admin/webhooks.py; a new endpoint's secret
and full URL are on the page that creates it only."""

from __future__ import annotations

from typing import Annotated, Any, get_args

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app.admin import webhooks as admin_webhooks
from app.admin.deps import NO_STORE, ROW_ID_MAX, AdminDep, Principal, RowId, require_admin
from app.admin.pages import _page as admin_page, _refusal
from app.common.errors import AppError
from app.delivery.deps import SessionDep, SettingsDep, UnitOfWorkRoute
from app.webhooks import service
from app.webhooks.models import EVENT_TYPES, DeliveryStatus
from app.webhooks.schemas import EndpointIn, EndpointPatch

router = APIRouter(
    prefix="/admin/webhooks",
    include_in_schema=False,
    dependencies=[Depends(require_admin)],
    route_class=UnitOfWorkRoute,
)
EndpointId = RowId
DeliveryId = RowId


def _page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    """An admin page (app/admin/pages.py), never cached: a new endpoint's secret is on the page that creates it."""
    return admin_page(request, name, context, status_code, headers=NO_STORE)


def _endpoints_page(request: Request, session: Any, admin: Principal, status_code: int = 200, **extra: Any) -> Response:
    endpoints = [service.endpoint_out(row) for row in service.list_endpoints(session)]
    context = {"admin": admin, "endpoints": endpoints, "event_types": EVENT_TYPES, "created": None, **extra}
    return _page(request, "webhooks.html", context, status_code)


@router.get("", response_class=HTMLResponse)
def endpoints_page(request: Request, session: SessionDep, admin: AdminDep) -> Response:
    return _endpoints_page(request, session, admin)


@router.post("", response_class=HTMLResponse)
def endpoint_create(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    settings: SettingsDep,
    url: Annotated[str, Form(max_length=2000)] = "",
    events: Annotated[list[str] | None, Form()] = None,
    description: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    try:
        data = EndpointIn.model_validate({"url": url, "events": events or [], "description": description})
        with session.begin_nested():
            row, secret = admin_webhooks.create_endpoint(
                session, data=data, actor=admin.actor, allow_private=settings.webhooks_allow_private
            )
    except (AppError, ValidationError) as exc:
        return _endpoints_page(request, session, admin, **_refusal(exc, request))
    return _endpoints_page(request, session, admin, 201, created=service.endpoint_created(row, secret))


@router.post("/{endpoint_id}/active", response_class=HTMLResponse)
def endpoint_active(
    endpoint_id: EndpointId,
    session: SessionDep,
    admin: AdminDep,
    settings: SettingsDep,
    active: Annotated[bool, Form()],
) -> Response:
    admin_webhooks.update_endpoint(
        session,
        endpoint_id=endpoint_id,
        data=EndpointPatch(active=active),
        actor=admin.actor,
        allow_private=settings.webhooks_allow_private,
    )
    return RedirectResponse(f"/admin/webhooks?msg={'resumed' if active else 'paused'}", status_code=303)


@router.get("/deliveries", response_class=HTMLResponse)
def deliveries_page(
    request: Request,
    session: SessionDep,
    admin: AdminDep,
    endpoint_id: Annotated[int | None, Query(ge=1, le=ROW_ID_MAX)] = None,
    status: Annotated[DeliveryStatus | None, Query()] = None,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Response:
    page = service.list_deliveries(session, endpoint_id=endpoint_id, status=status, limit=50, offset=offset)
    filters = {"endpoint_id": endpoint_id or "", "status": status or ""}
    context = {"admin": admin, "page": page, "filters": filters, "statuses": get_args(DeliveryStatus)}
    return _page(request, "webhook_deliveries.html", context)


@router.get("/deliveries/{delivery_id}", response_class=HTMLResponse)
def delivery_page(request: Request, delivery_id: DeliveryId, session: SessionDep, admin: AdminDep) -> Response:
    detail = service.delivery_detail(session, delivery_id=delivery_id)
    return _page(request, "webhook_delivery.html", {"admin": admin, "d": detail})


@router.post("/deliveries/{delivery_id}/replay", response_class=HTMLResponse)
def delivery_replay(delivery_id: DeliveryId, session: SessionDep, admin: AdminDep) -> Response:
    row = admin_webhooks.replay(session, delivery_id=delivery_id, actor=admin.actor)
    return RedirectResponse(f"/admin/webhooks/deliveries/{row.id}?msg=replayed", status_code=303)
