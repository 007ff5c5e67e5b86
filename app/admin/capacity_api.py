"""The admin JSON API for capacity: maintenance holds on a SKU's units, and the capacity by month. Thin routes over
app/admin/capacity_editing.py; behind `require_admin` as the rest of /admin/api."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Body, Path, Query, Response

from app.admin import capacity_editing, examples
from app.admin.api import EDIT_RESPONSES, Region, SkuId, admin_api_router
from app.admin.capacity_schemas import HoldIn, HoldOut, RegionUseOut
from app.admin.deps import ROW_ID_MAX, AdminDep
from app.delivery.deps import SessionDep

router = admin_api_router()
FirstDay = Annotated[date, Path(description="The hold's first day (YYYY-MM-DD)", examples=["2027-01-04"])]
HoldBody = Annotated[HoldIn, Body(openapi_examples=examples.HOLD)]


@router.get("/skus/{sku_id}/holds", summary="The SKU's maintenance holds, by region and start")
def list_holds(sku_id: SkuId, session: SessionDep) -> list[HoldOut]:
    return capacity_editing.holds(session, slug=sku_id)


@router.put(
    "/skus/{sku_id}/holds/{region}/{starts_on}",
    responses=EDIT_RESPONSES,
    summary="Take units out of service in a region from a day (`version` null for a new hold, else its version)",
)
def set_hold(
    sku_id: SkuId, region: Region, starts_on: FirstDay, body: HoldBody, session: SessionDep, admin: AdminDep
) -> HoldOut:
    row = capacity_editing.set_hold(
        session, slug=sku_id, region=region, starts_on=starts_on, data=body, actor=admin.actor
    )
    return capacity_editing.hold_out(row)


@router.delete(
    "/skus/{sku_id}/holds/{region}/{starts_on}",
    status_code=204,
    responses=EDIT_RESPONSES,
    summary="End a hold: its units are free again",
)
def delete_hold(
    sku_id: SkuId,
    region: Region,
    starts_on: FirstDay,
    session: SessionDep,
    admin: AdminDep,
    version: Annotated[int, Query(ge=1, le=ROW_ID_MAX, description="The version the deletion is based on")],
) -> Response:
    capacity_editing.delete_hold(
        session, slug=sku_id, region=region, starts_on=starts_on, version=version, actor=admin.actor
    )
    return Response(status_code=204)


@router.get("/capacity", summary="Per SKU and region, month by month: units held by accepted and issued quotes, free")
def capacity(
    session: SessionDep,
    months: Annotated[int, Query(ge=1, le=24, description="Months from the current one; default 6")] = 6,
) -> list[RegionUseOut]:
    return capacity_editing.capacity(session, months=months)
