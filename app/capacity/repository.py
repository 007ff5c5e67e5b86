"""Capacity queries: the inventory rows (and their lock), maintenance holds and reservations. The only SQL of
app.capacity."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import ColumnElement, CompoundSelect, Date, and_, bindparam, or_, select, union_all
from sqlalchemy.orm import Session

from app.capacity.models import MaintenanceHold, Reservation
from app.catalog.models import Sku, SkuAvailability
from app.db.base import UtcDateTime


def inventory_row(session: Session, *, sku_pk: int, region: str, lock: bool = False) -> SkuAvailability | None:
    """The SKU's inventory in a region; `lock`: `SELECT … FOR UPDATE`, so that on PostgreSQL two quotes for the
    same SKU and region count what is held one after the other (SQLite ignores it: its writers are serialised)."""
    query = select(SkuAvailability).where(SkuAvailability.sku_pk == sku_pk, SkuAvailability.region == region)
    if lock:
        query = query.with_for_update()
    return session.scalar(query)


def inventory(session: Session) -> list[SkuAvailability]:
    return list(session.scalars(select(SkuAvailability).order_by(SkuAvailability.sku_pk, SkuAvailability.region)))


def _holding(now: datetime) -> ColumnElement[bool]:
    """A reservation holds its units while confirmed, or held by a quote still valid."""
    return or_(Reservation.state == "confirmed", and_(Reservation.state == "held", Reservation.held_until >= now))


def reservations(
    session: Session, *, now: datetime, after: date, sku_pk: int | None = None, region: str | None = None
) -> list[Reservation]:
    """The reservations holding units on some day after `after` (of one SKU and region when given)."""
    query = select(Reservation).where(_holding(now), Reservation.ends_on > after)
    if sku_pk is not None:
        query = query.where(Reservation.sku_pk == sku_pk)
    if region is not None:
        query = query.where(Reservation.region == region)
    return list(session.scalars(query))


def maintenance(
    session: Session, *, after: date, sku_pk: int | None = None, region: str | None = None
) -> list[MaintenanceHold]:
    query = select(MaintenanceHold).where(MaintenanceHold.ends_on > after)
    if sku_pk is not None:
        query = query.where(MaintenanceHold.sku_pk == sku_pk)
    if region is not None:
        query = query.where(MaintenanceHold.region == region)
    return list(session.scalars(query.order_by(MaintenanceHold.starts_on, MaintenanceHold.id)))


def maintenance_for(session: Session, sku_pk: int) -> list[MaintenanceHold]:
    query = select(MaintenanceHold).where(MaintenanceHold.sku_pk == sku_pk)
    return list(session.scalars(query.order_by(MaintenanceHold.region, MaintenanceHold.starts_on, MaintenanceHold.id)))


def get_maintenance(session: Session, *, sku_pk: int, region: str, starts_on: date) -> MaintenanceHold | None:
    query = select(MaintenanceHold).where(
        MaintenanceHold.sku_pk == sku_pk, MaintenanceHold.region == region, MaintenanceHold.starts_on == starts_on
    )
    return session.scalar(query)


def reservation_of(session: Session, quote_id: int) -> Reservation | None:
    return session.scalar(select(Reservation).where(Reservation.quote_id == quote_id))


def add(session: Session, row: MaintenanceHold | Reservation) -> None:
    session.add(row)
    session.flush()


def delete(session: Session, row: MaintenanceHold) -> None:
    session.delete(row)
    session.flush()


def regions_in_use(session: Session, *, sku_pk: int, now: datetime, after: date) -> set[str]:
    """The SKU's regions with an inventory row (tracked), a reservation holding units or a maintenance hold on some
    day after `after`: the regions its edits may not drop (review R7-3)."""
    tracked = select(SkuAvailability.region).where(SkuAvailability.sku_pk == sku_pk)
    reserved = select(Reservation.region).where(
        Reservation.sku_pk == sku_pk, _holding(now), Reservation.ends_on > after
    )
    kept = select(MaintenanceHold.region).where(MaintenanceHold.sku_pk == sku_pk, MaintenanceHold.ends_on > after)
    return set(session.scalars(union_all(tracked, reserved, kept)))


def _holds_by_slug_statement() -> CompoundSelect[str, str, date, date, int]:
    """Built once (`bindparam` for the moment and the day): /recommend runs it on every request."""
    now, after = bindparam("now", type_=UtcDateTime()), bindparam("after", type_=Date())
    holding = or_(Reservation.state == "confirmed", and_(Reservation.state == "held", Reservation.held_until >= now))
    reserved = (
        select(Sku.slug, Reservation.region, Reservation.starts_on, Reservation.ends_on, Reservation.units)
        .join(Sku, Sku.id == Reservation.sku_pk)
        .where(holding, Reservation.ends_on > after)
    )
    kept = (
        select(
            Sku.slug, MaintenanceHold.region, MaintenanceHold.starts_on, MaintenanceHold.ends_on, MaintenanceHold.units
        )
        .join(Sku, Sku.id == MaintenanceHold.sku_pk)
        .where(MaintenanceHold.ends_on > after)
    )
    return union_all(reserved, kept)


HOLDS_BY_SLUG = _holds_by_slug_statement()


def holds_by_slug(session: Session, *, now: datetime, after: date) -> list[tuple[str, str, date, date, int]]:
    """(SKU id, region, first day, day after the last, units) of every hold on some day after `after`:
    reservations that hold and maintenance holds, in one statement."""
    rows = session.execute(HOLDS_BY_SLUG, {"now": now, "after": after})
    return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]
