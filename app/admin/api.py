"""The admin JSON API for scripts, authenticated by `Authorization: Bearer <token>` API tokens.

Thin routes: the rules live in app/admin/catalog_editing.py, catalog_transfer.py and service.py. The router
carries `require_admin`, so every route here refuses anonymous (401) and non-admin (403) calls.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Response
from sqlalchemy.orm import Session

from app.admin import catalog_editing, catalog_transfer, examples, service
from app.admin.deps import AdminDep, Principal, RowId, require_admin
from app.admin.schemas import (
    AddonIn,
    AddonOut,
    AuditOut,
    AuditPage,
    AvailabilityIn,
    AvailabilityOut,
    CatalogDoc,
    ImportReport,
    PriceCreate,
    SkuAdminOut,
    SkuCreate,
    SkuPatch,
    VersionIn,
)
from app.apikeys import service as apikeys_service
from app.apikeys.schemas import ApiKeyCreate, ApiKeyIssued, ApiKeyOut
from app.delivery.deps import SessionDep, UnitOfWorkRoute
from app.estimator.vocabulary import QuoteStatus, SkuStatus
from app.quotes import service as quotes_service
from app.quotes.schemas import QuoteList, QuoteOut

AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "No or bad API token"},
    403: {"description": "Not an active admin"},
}


def admin_api_router(prefix: str = "/admin/api") -> APIRouter:
    """A router of the admin JSON API: behind `require_admin`, one unit of work a request."""
    return APIRouter(
        prefix=prefix,
        tags=["admin"],
        dependencies=[Depends(require_admin)],
        responses=AUTH_RESPONSES,
        route_class=UnitOfWorkRoute,
    )


router = admin_api_router()
INVALID_RESPONSES: dict[int | str, dict[str, Any]] = {422: {"description": "Invalid input, naming each field"}}
EDIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    409: {"description": "Stale version: `errors` lists what changed, with current values"},
    **INVALID_RESPONSES,
}
SkuId = Annotated[str, Path(description="The SKU id (slug)", max_length=64, examples=[examples.CARD])]
SkuPatchBody = Annotated[SkuPatch, Body(openapi_examples=examples.SKU_PATCH)]
PriceBody = Annotated[PriceCreate, Body(openapi_examples=examples.PRICE)]
VersionBody = Annotated[VersionIn, Body(openapi_examples=examples.VERSION)]
AvailabilityBody = Annotated[AvailabilityIn, Body(openapi_examples=examples.AVAILABILITY)]
AddonBody = Annotated[AddonIn, Body(openapi_examples=examples.ADDON)]
Region = Annotated[str, Path(max_length=64, description="Region id", examples=["shenzhen"])]
AddonCode = Annotated[str, Path(max_length=64, description="The add-on's id within the SKU", examples=["uplink-10g"])]


@router.get("/skus", summary="Every SKU, retired ones included, with price history and availability")
def list_skus(session: SessionDep) -> list[SkuAdminOut]:
    return catalog_editing.admin_skus(session)


@router.post("/skus", status_code=201, summary="Create a SKU with its first price", responses=EDIT_RESPONSES)
def create_sku(
    body: Annotated[SkuCreate, Body(openapi_examples=examples.SKU_CREATE)],
    session: SessionDep,
    admin: AdminDep,
    response: Response,
) -> SkuAdminOut:
    sku = catalog_editing.create_sku(session, data=body, actor=admin.actor)
    response.headers["Location"] = f"/admin/api/skus/{sku.slug}"
    return catalog_editing.sku_admin_out(session, sku)


@router.get("/skus/{sku_id}", summary="One SKU with its version, price history and availability")
def get_sku(sku_id: SkuId, session: SessionDep) -> SkuAdminOut:
    return catalog_editing.sku_admin_out(session, catalog_editing.get_sku(session, sku_id))


@router.patch("/skus/{sku_id}", summary="Edit a SKU (fields sent change; `version` required)", responses=EDIT_RESPONSES)
def patch_sku(sku_id: SkuId, body: SkuPatchBody, session: SessionDep, admin: AdminDep) -> SkuAdminOut:
    sku = catalog_editing.update_sku(session, slug=sku_id, data=body, actor=admin.actor)
    return catalog_editing.sku_admin_out(session, sku)


@router.post(
    "/skus/{sku_id}/prices",
    status_code=201,
    responses=EDIT_RESPONSES,
    summary="A new list price from `effective_from` (default now); the history stays",
)
def add_price(sku_id: SkuId, body: PriceBody, session: SessionDep, admin: AdminDep) -> SkuAdminOut:
    sku = catalog_editing.add_price(session, slug=sku_id, data=body, actor=admin.actor)
    return catalog_editing.sku_admin_out(session, sku)


@router.post(
    "/skus/{sku_id}/retire",
    summary="Retire: no longer listed nor recommended; quotes stay valid",
    responses=EDIT_RESPONSES,
)
def retire_sku(sku_id: SkuId, body: VersionBody, session: SessionDep, admin: AdminDep) -> SkuAdminOut:
    return _set_status(session, sku_id, body, admin, "retired")


@router.post("/skus/{sku_id}/reactivate", summary="Put a retired SKU back on sale", responses=EDIT_RESPONSES)
def reactivate_sku(sku_id: SkuId, body: VersionBody, session: SessionDep, admin: AdminDep) -> SkuAdminOut:
    return _set_status(session, sku_id, body, admin, "active")


def _set_status(session: Session, sku_id: str, body: VersionIn, admin: Principal, status: SkuStatus) -> SkuAdminOut:
    sku = catalog_editing.set_status(session, slug=sku_id, version=body.version, status=status, actor=admin.actor)
    return catalog_editing.sku_admin_out(session, sku)


@router.put(
    "/skus/{sku_id}/availability/{region}",
    responses=EDIT_RESPONSES,
    summary="Units that exist in a region (the inventory quotes hold units of); `version` null for a new region",
)
def set_availability(
    sku_id: SkuId, region: Region, body: AvailabilityBody, session: SessionDep, admin: AdminDep
) -> AvailabilityOut:
    row = catalog_editing.set_availability(session, slug=sku_id, region=region, data=body, actor=admin.actor)
    return AvailabilityOut(
        region=row.region,
        units_available=row.units_available,
        version=row.version,
        updated_at=service.aware(row.updated_at),
    )


@router.put(
    "/skus/{sku_id}/addons/{code}",
    responses=EDIT_RESPONSES,
    summary="Create or edit an add-on (e.g. InfiniBand); `version` null for a new one",
)
def set_addon(sku_id: SkuId, code: AddonCode, body: AddonBody, session: SessionDep, admin: AdminDep) -> AddonOut:
    return catalog_editing.addon_out(
        catalog_editing.set_addon(session, slug=sku_id, code=code, data=body, actor=admin.actor)
    )


@router.get("/audit", summary="The audit log, newest first, filtered")
def audit(
    session: SessionDep,
    actor: Annotated[str | None, Query(max_length=254, description="Email of who acted")] = None,
    action: Annotated[str | None, Query(max_length=64, examples=["sku.update"])] = None,
    entity_type: Annotated[str | None, Query(max_length=32, examples=["sku"])] = None,
    entity_id: Annotated[str | None, Query(max_length=200)] = None,
    since: Annotated[datetime | None, Query(description="Inclusive")] = None,
    until: Annotated[datetime | None, Query(description="Exclusive")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> AuditPage:
    filters = service.AuditFilter(
        actor=actor, action=action, entity_type=entity_type, entity_id=entity_id, since=since, until=until
    )
    rows, total = service.audit_page(session, filters, limit=limit, offset=offset)
    items = [AuditOut.model_validate(row, from_attributes=True) for row in rows]
    return AuditPage(total=total, limit=limit, offset=offset, items=items)


@router.get("/quotes", summary="Quotes, newest first, filtered")
def list_quotes(
    session: SessionDep,
    status: Annotated[QuoteStatus | None, Query()] = None,
    customer: Annotated[str | None, Query(max_length=200, description="Name, company or email")] = None,
    created_from: Annotated[datetime | None, Query(description="Inclusive")] = None,
    created_to: Annotated[datetime | None, Query(description="Exclusive")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> QuoteList:
    return quotes_service.list_quotes(
        session,
        status=status,
        customer=customer,
        created_from=created_from,
        created_to=created_to,
        limit=limit,
        offset=offset,
    )


@router.post(
    "/quotes/{public_id}/cancel",
    summary="Cancel an issued quote (recorded in the audit log)",
    responses={409: {"description": "The quote is accepted or expired"}},
)
def cancel_quote(public_id: str, session: SessionDep, admin: AdminDep) -> QuoteOut:
    return service.cancel_quote(session, public_id=public_id, actor=admin.actor)


@router.get("/keys", summary="The sales tools' API keys (never the keys themselves), live ones first")
def list_api_keys(session: SessionDep) -> list[ApiKeyOut]:
    return apikeys_service.list_keys(session)


@router.post(
    "/keys",
    status_code=201,
    summary="Issue an API key: the answer's `key` is shown this once (recorded in the audit log without it)",
    responses=INVALID_RESPONSES,
)
def issue_api_key(
    body: Annotated[ApiKeyCreate, Body(openapi_examples=examples.API_KEY)], session: SessionDep, admin: AdminDep
) -> ApiKeyIssued:
    return service.issue_api_key(session, data=body, actor=admin.actor)


@router.post("/keys/{key_id}/revoke", summary="Revoke an API key: refused from its next request on")
def revoke_api_key(key_id: RowId, session: SessionDep, admin: AdminDep) -> ApiKeyOut:
    return service.revoke_api_key(session, key_id=key_id, actor=admin.actor)


@router.get("/catalog/export", summary="The whole catalog as one JSON document")
def export_catalog(session: SessionDep) -> CatalogDoc:
    return catalog_transfer.export_catalog(session)


@router.post(
    "/catalog/import",
    summary="Import a catalog document: validated whole, then applied",
    responses={
        409: {
            "description": "The catalog changed here after the document was exported, or an inventory would be "
            "below what quotes hold (`code` overbooked); nothing was written"
        },
        422: {"description": "Nothing was written; `errors` lists every problem"},
    },
)
def import_catalog(
    body: Annotated[CatalogDoc, Body(openapi_examples=examples.CATALOG)],
    session: SessionDep,
    admin: AdminDep,
    force: Annotated[
        bool, Query(description="Import even over catalog changes made here after the document was exported")
    ] = False,
    allow_overbooking: Annotated[
        bool,
        Query(
            description="Import even an inventory below what issued and accepted quotes hold (a server broke); "
            "without it such a document is a 409 `overbooked` naming the rows, and nothing is written"
        ),
    ] = False,
) -> ImportReport:
    return catalog_transfer.import_catalog(
        session, doc=body, actor=admin.actor, force=force, allow_overbooking=allow_overbooking
    )
