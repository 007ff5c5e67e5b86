"""Capacity editing rules for admins: maintenance holds on a SKU's units in a region, and the capacity by month.

As with prices, every edit of an existing hold names the version it was based on: a stale one is refused with 409
and nothing is written (two saves racing past the check are stopped by `version_id_col`), and every change
appends an audit row with the hold before and after. The units that exist are set with the SKU's availability
(app.admin.catalog_editing.set_availability).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.admin.capacity_schemas import HoldIn, HoldOut, MonthUseOut, RegionUseOut
from app.admin.catalog_editing import coded, get_sku, stale_error, stale_words, version_error
from app.admin.overbooking import Edit, refuse_overbooking
from app.admin.service import Actor, aware, record
from app.capacity import repository, service
from app.capacity.ledger import Hold
from app.capacity.models import MaintenanceHold
from app.catalog.models import Sku
from app.common.errors import Conflict, InvalidInput, NotFound
from app.common.schemas import mirror
from app.text.i18n_admin import ADMIN_EN

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


def refused(field: str, code: str, **params: Any) -> InvalidInput:
    """A 422 on `field` worded from its code (app/text/i18n_admin.py `admin_err_<code>`; the admin pages word it in
    their reader's language), its values in `errors[].params`."""
    message = ADMIN_EN[f"admin_err_{code}"].format(**params)
    return InvalidInput(
        f"{field}: {message}", errors=[{"field": field, "message": message, "type": code, "params": params}]
    )


def _check(sku: Sku, region: str, starts_on: date, ends_on: date | None = None) -> None:
    if region not in sku.regions:
        raise refused("region", "hold_region", sku=sku.slug, regions=", ".join(sku.regions))
    if ends_on is not None and ends_on <= starts_on:
        raise refused("ends_on", "hold_ends_before", starts_on=starts_on.isoformat())


def _check_dates(session: Session, starts_on: date, ends_on: date, *, new: bool) -> None:
    """A new hold starts at most HOLD_BACKDATE_DAYS ago (an edit of an older one keeps its first day); any ends by
    the last day a rental can hold units (app.capacity.service.hold_bounds)."""
    earliest, horizon = service.hold_bounds(session)
    if new and starts_on < earliest:
        raise refused("starts_on", "hold_starts_early", earliest=earliest.isoformat(), days=service.HOLD_BACKDATE_DAYS)
    if ends_on > horizon:
        raise refused("ends_on", "hold_ends_late", horizon=horizon.isoformat())


def _check_units(units: int, total: int | None) -> None:
    """A hold takes at most the units that exist (when the region's inventory is tracked)."""
    if total is not None and units > total:
        raise refused("units", "hold_units", total=total)


def _stale(slug: str, row: MaintenanceHold | None, version: int | None) -> Conflict:
    if row is None:
        return Conflict(
            f"{slug} has no maintenance hold there yet; send version null",
            errors=[version_error(None, version)],
        )
    return Conflict(
        f"the maintenance hold {stale_words(row.version, version)}: now {row.units} units until "
        f"{row.ends_on.isoformat()}. Nothing was saved.",
        errors=[version_error(row.version, version)],
    )


def set_hold(
    session: Session, *, slug: str, region: str, starts_on: date, data: HoldIn, actor: Actor
) -> MaintenanceHold:
    """Create the hold of a SKU, region and first day (`version` null) or edit it (its version)."""
    sku = get_sku(session, slug)
    _check(sku, region, starts_on, data.ends_on)
    inventory = repository.inventory_row(session, sku_pk=sku.id, region=region, lock=True)
    total = inventory.units_available if inventory is not None else None
    _check_units(data.units, total)
    row = repository.get_maintenance(session, sku_pk=sku.id, region=region, starts_on=starts_on)
    if (row is None) != (data.version is None) or (row is not None and row.version != data.version):
        raise _stale(slug, row, data.version)
    _check_dates(session, starts_on, data.ends_on, new=row is None)
    before = _snapshot(row)
    if total is not None:
        edit = Edit(sku.id, slug, region, total, total, Hold(starts_on, data.ends_on, data.units))
        refuse_overbooking(session, edit, field="units", force=data.force)
    if row is None:
        row = MaintenanceHold(sku_pk=sku.id, region=region, starts_on=starts_on, created_by=actor.email)
        session.add(row)
    row.ends_on, row.units, row.note = data.ends_on, data.units, data.note
    try:
        session.flush()
    except StaleDataError as exc:
        raise Conflict(
            "the maintenance hold changed while saving; reload", errors=[stale_error("version", None, "stale_race")]
        ) from exc
    _record_hold(session, actor=actor, action="maintenance.set", sku=sku, row=row, before=before)
    return row


def delete_hold(session: Session, *, slug: str, region: str, starts_on: date, version: int, actor: Actor) -> None:
    """End a hold early (its units are free again): the version it was based on, as for an edit."""
    sku = get_sku(session, slug)
    row = repository.get_maintenance(session, sku_pk=sku.id, region=region, starts_on=starts_on)
    if row is None:
        error = coded("starts_on", "hold_missing", sku=slug, region=region, starts_on=starts_on.isoformat())
        raise NotFound(f"no maintenance hold of {slug} in {region} from {starts_on.isoformat()}", errors=[error])
    if version != row.version:
        raise _stale(slug, row, version)
    before = _snapshot(row)
    try:
        repository.delete(session, row)
    except StaleDataError as exc:
        raise Conflict(
            "the maintenance hold changed while deleting; reload", errors=[stale_error("version", None, "stale_race")]
        ) from exc
    _record_hold(session, actor=actor, action="maintenance.delete", sku=sku, row=row, before=before)


def _record_hold(
    session: Session, *, actor: Actor, action: str, sku: Sku, row: MaintenanceHold, before: dict[str, Any] | None
) -> None:
    """Audit a change of a maintenance hold: `after` is the hold as it stands now, none once deleted."""
    record(
        session,
        actor=actor,
        action=action,
        entity_type="maintenance_hold",
        entity_id=f"{sku.slug}/{row.region}/{row.starts_on.isoformat()}",
        before=before,
        after=None if inspect(row).deleted else _snapshot(row),
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
