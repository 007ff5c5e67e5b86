"""Capacity editing rules for admins: maintenance holds on a SKU's units in a region, and the capacity by month.

As with prices, every edit of an existing hold names the version it was based on: a stale one is refused with 409
and nothing is written (two saves racing past the check are stopped by `version_id_col`), and every change
appends an audit row with the hold before and after. The units that exist are set with the SKU's availability
(app.admin.catalog_editing.set_availability).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.admin.capacity_schemas import HoldIn, HoldOut, MonthUseOut, RegionUseOut
from app.admin.catalog_editing import get_sku
from app.admin.service import Actor, aware, record
from app.capacity import repository, service
from app.capacity.models import MaintenanceHold
from app.catalog.models import Sku
from app.errors import Conflict, InvalidInput, NotFound
from app.schemas import mirror

CAPACITY_MONTHS = 6  # the capacity page's horizon: half a year, the longest a monthly customer plans ahead


def hold_out(row: MaintenanceHold) -> HoldOut:
    return mirror(HoldOut, row, updated_at=aware(row.updated_at))


def holds(session: Session, *, slug: str) -> list[HoldOut]:
    return [hold_out(row) for row in repository.maintenance_for(session, get_sku(session, slug).id)]


def _snapshot(row: MaintenanceHold | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "region": row.region,
        "starts_on": row.starts_on.isoformat(),
        "ends_on": row.ends_on.isoformat(),
        "units": row.units,
        "note": row.note,
        "version": row.version,
    }


def _check_region(sku: Sku, region: str) -> None:
    if region not in sku.regions:
        message = f"{sku.slug} is sold in {', '.join(sku.regions)}"
        raise InvalidInput(f"region: {message}", errors=[{"field": "region", "message": message, "type": "catalog"}])


def _get(session: Session, sku: Sku, hold_id: int) -> MaintenanceHold:
    row = repository.get_maintenance(session, sku_pk=sku.id, hold_id=hold_id)
    if row is None:
        raise NotFound(f"no maintenance hold {hold_id} on {sku.slug}")
    return row


def _stale(row: MaintenanceHold, version: int | None) -> Conflict:
    return Conflict(
        f"maintenance hold {row.id} is at version {row.version}, not {version}: now {row.units} units "
        f"{row.starts_on.isoformat()}–{row.ends_on.isoformat()}. Nothing was saved.",
        errors=[{"field": "version", "message": "current version", "type": "stale", "current": row.version}],
    )


def add_hold(session: Session, *, slug: str, data: HoldIn, actor: Actor) -> MaintenanceHold:
    sku = get_sku(session, slug)
    _check_region(sku, data.region)
    if data.version is not None:
        raise InvalidInput(
            "version: a new hold has no version yet; send null",
            errors=[{"field": "version", "message": "send null for a new hold", "type": "value_error"}],
        )
    row = MaintenanceHold(
        sku_pk=sku.id,
        region=data.region,
        starts_on=data.starts_on,
        ends_on=data.ends_on,
        units=data.units,
        note=data.note,
        created_by=actor.email,
    )
    repository.add(session, row)
    _audit(session, actor, "maintenance.add", sku, row, None, _snapshot(row))
    return row


def update_hold(session: Session, *, slug: str, hold_id: int, data: HoldIn, actor: Actor) -> MaintenanceHold:
    sku = get_sku(session, slug)
    _check_region(sku, data.region)
    row = _get(session, sku, hold_id)
    if data.version != row.version:
        raise _stale(row, data.version)
    before = _snapshot(row)
    row.region, row.starts_on, row.ends_on = data.region, data.starts_on, data.ends_on
    row.units, row.note = data.units, data.note
    try:
        session.flush()
    except StaleDataError as exc:
        raise Conflict(f"maintenance hold {hold_id} changed while saving; reload") from exc
    _audit(session, actor, "maintenance.edit", sku, row, before, _snapshot(row))
    return row


def delete_hold(session: Session, *, slug: str, hold_id: int, version: int, actor: Actor) -> None:
    sku = get_sku(session, slug)
    row = _get(session, sku, hold_id)
    if version != row.version:
        raise _stale(row, version)
    before = _snapshot(row)
    try:
        repository.delete(session, row)
    except StaleDataError as exc:
        raise Conflict(f"maintenance hold {hold_id} changed while deleting; reload") from exc
    _audit(session, actor, "maintenance.delete", sku, row, before, None)


def _audit(
    session: Session,
    actor: Actor,
    action: str,
    sku: Sku,
    row: MaintenanceHold,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    record(
        session,
        actor=actor,
        action=action,
        entity_type="maintenance_hold",
        entity_id=f"{sku.slug}/{row.id}",
        before=before,
        after=after,
    )


def capacity(session: Session, *, months: int = CAPACITY_MONTHS) -> list[RegionUseOut]:
    return [
        RegionUseOut(
            sku_id=use.sku_id,
            region=use.region,
            total=use.total,
            rental_unit=use.rental_unit,
            months=[mirror(MonthUseOut, month) for month in use.months],
        )
        for use in service.capacity_by_month(session, months=months)
    ]
