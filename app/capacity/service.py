"""Capacity rules: what a SKU has free in a region from a date, the hold an issued quote takes on it, and its
release.

The units that exist are the catalog's inventory rows (SkuAvailability.units_available, set by the admin); a
SKU and region without a row is not tracked (quoted "on request": nothing is held or refused). Held are the
maintenance holds and the reservations of issued quotes still valid and of accepted quotes; a cancelled or expired
quote holds nothing, so its units are free again at once.

Nothing is oversold because the count and the new hold are written under one lock, taken after the quote's number
(app.quotes.repository.next_number, itself a lock every new quote queues on): on PostgreSQL the inventory row's
`SELECT … FOR UPDATE`, on SQLite the write transaction the number opened (SQLite has one writer at a time). A
quote that sees too few units before the lock is refused without queueing on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.capacity import repository
from app.capacity.ledger import (
    Hold,
    add_months,
    free_units,
    held_peak,
    last_start,
    next_free,
    overbooked_days,
    window,
)
from app.capacity.models import Reservation
from app.catalog.models import Sku
from app.catalog.zone import catalog_zone
from app.common.errors import Conflict, InvalidInput, refused
from app.estimator.vocabulary import MAX_QUOTE_MONTHS
from app.text import messages

# A maintenance hold may be recorded for a repair that began up to a month ago (the admin learns of it late), and
# ends at most where a rental can still hold units: the last start (the booking window, ledger.last_start) plus
# the longest rental a quote prices (MAX_QUOTE_MONTHS); a hold beyond that restricts nothing.
HOLD_BACKDATE_DAYS = 31


class CapacityTaken(Conflict):
    """409: the units asked for are not free from the start date (`code` capacity_taken)."""


def catalog_today(session: Session | None = None) -> date:
    """Today in the catalog's timezone (CATALOG_TIMEZONE): the default start of a rental."""
    return datetime.now(catalog_zone(session)).date()


def priced_at(session: Session, start: date | None) -> datetime | None:
    """The moment a rental starting on `start` is priced at: the start of that day in the catalog's timezone, so a
    quote or an option for a rental that starts after a published price change is priced at the price in force
    when the rental starts (the rule a rental business quotes by: a price rise announced for 2026-12-20 applies to
    a rental from 2027-01-05, whenever it is quoted; app.catalog.pricing.current_price). None: it starts today, at
    the price in force now."""
    if start is None or start <= catalog_today(session):
        return None
    return datetime.combine(start, time(0), tzinfo=catalog_zone(session))


def start_of(session: Session, start_date: date | None, *, field: str) -> date:
    """A rental's first day: the one asked for, within the booking window (today to ledger.last_start, else 422 on
    `field`), or today in the catalog's timezone."""
    today = catalog_today(session)
    if start_date is None:
        return today
    latest = last_start(today)
    if not today <= start_date <= latest:
        first, last = today.isoformat(), latest.isoformat()  # figures the pages word in their language too
        raise refused(InvalidInput, "start_outside_window", field=field, today=first, latest=last)
    return start_date


def hold_bounds(session: Session) -> tuple[date, date]:
    """The earliest first day of a new maintenance hold and the latest day it may end on (HOLD_BACKDATE_DAYS)."""
    today = catalog_today(session)
    return today - timedelta(days=HOLD_BACKDATE_DAYS), add_months(last_start(today), MAX_QUOTE_MONTHS)


@dataclass(frozen=True, slots=True)
class Free:
    """What a SKU has free in a region over a rental: `free_units` on every day of it, and `from_`, the first day
    from which the units asked for are free for as long (the start itself when they are; None: never, as the
    inventory has fewer)."""

    region: str
    total: int
    free_units: int
    from_: date | None


def _holds(session: Session, *, sku_pk: int, region: str, start: date, now: datetime) -> list[Hold]:
    reserved = repository.reservations(session, now=now, after=start, sku_pk=sku_pk, region=region)
    kept = repository.maintenance(session, after=start, sku_pk=sku_pk, region=region)
    return [Hold(r.starts_on, r.ends_on, r.units) for r in reserved] + [
        Hold(m.starts_on, m.ends_on, m.units) for m in kept
    ]


def free_in(
    session: Session, *, sku_pk: int, region: str, total: int, units: int, start: date, months: int, now: datetime
) -> Free:
    holds = _holds(session, sku_pk=sku_pk, region=region, start=start, now=now)
    first, end = window(start, months)
    free = free_units(total, holds, first, end)
    found = start if free >= units else next_free(total, holds, start, (end - first).days, units, months=months)
    return Free(region, total, free, found)


def _tracked_free(
    session: Session, *, sku: Sku, region: str, units: int, start: date, months: int, now: datetime, lock: bool = False
) -> Free | None:
    """What is free of the SKU in `region` (free_in on its inventory row, read `lock`ed or not); None: not tracked."""
    row = repository.inventory_row(session, sku_pk=sku.id, region=region, lock=lock)
    if row is None:
        return None
    total = row.units_available
    return free_in(session, sku_pk=sku.id, region=region, total=total, units=units, start=start, months=months, now=now)


def choose_region(
    session: Session, *, sku: Sku, regions: list[str], units: int, start: date, months: int, now: datetime
) -> str | None:
    """The region to hold `units` in: the first of `regions` (the one asked for, else the SKU's in order) that is
    not tracked or has them free. None: not tracked (nothing to hold). Raises CapacityTaken when every region is
    tracked and short; read without a lock: `hold` counts again under it."""
    short: list[Free] = []
    for region in regions:
        free = _tracked_free(session, sku=sku, region=region, units=units, start=start, months=months, now=now)
        if free is None:
            return None
        if free.free_units >= units:
            return region
        short.append(free)
    raise taken(sku, short[0], units=units, start=start, latest=last_start(catalog_today(session)))


def hold(
    session: Session,
    *,
    quote_id: int,
    sku: Sku,
    region: str,
    units: int,
    start: date,
    months: int,
    held_until: datetime,
    now: datetime,
) -> Reservation | None:
    """Hold `units` for the quote under the inventory row's lock, or raise CapacityTaken; None when the region is
    not tracked any more (its figure went since `choose_region`: a catalog import)."""
    free = _tracked_free(session, sku=sku, region=region, units=units, start=start, months=months, now=now, lock=True)
    if free is None:
        return None
    if free.free_units < units:
        raise taken(sku, free, units=units, start=start, latest=last_start(catalog_today(session)))
    first, end = window(start, months)
    return _reserve(session, quote_id, sku, region, (first, end, units), state="held", held_until=held_until, now=now)


def _reserve(
    session: Session,
    quote_id: int,
    sku: Sku,
    region: str,
    days: tuple[date, date, int],
    *,
    state: str,
    held_until: datetime,
    now: datetime,
) -> Reservation:
    """Write the quote's reservation: `days`, its first day, the day after its last and its units."""
    first, end, units = days
    reservation = Reservation(
        quote_id=quote_id,
        sku_pk=sku.id,
        region=region,
        starts_on=first,
        ends_on=end,
        units=units,
        state=state,
        held_until=held_until,
        created_at=now,
    )
    repository.add(session, reservation)
    return reservation


def taken(sku: Sku, free: Free, *, units: int, start: date, latest: date) -> CapacityTaken:
    """The 409; `next_free_date` only where a quote may start then (on or before `latest`, the booking window's
    end), else null with `next_free_reason`: `inventory_short` (the region never has the units) or
    `beyond_booking_window` (free only from a day no start_date reaches yet)."""
    found = free.from_ if free.from_ is not None and free.from_ <= latest else None
    reason = None if found else ("inventory_short" if free.from_ is None else "beyond_booking_window")
    params: dict[str, Any] = {
        "sku": sku.slug,
        "region": free.region,
        "units": units,
        "unit": sku.rental_unit,
        "free_units": free.free_units,
        "start_date": start.isoformat(),
        "next_free_date": found.isoformat() if found else None,
        "next_free_reason": reason,
        "last_start_date": latest.isoformat(),
    }
    message = messages.quote_check("capacity_taken", params)
    error = {"field": "quantity", "message": message, "type": "capacity_taken", "params": params}
    extra = {
        "code": "capacity_taken",
        "free_units": free.free_units,
        "next_free_date": params["next_free_date"],
        "next_free_reason": reason,
    }
    return CapacityTaken(message, errors=[error], extra=extra)


def confirm(session: Session, *, quote_id: int) -> bool:
    """The quote was accepted: its hold stands until its rental ends. False: it holds nothing (see `take`)."""
    return _set_state(session, quote_id, "confirmed")


def tracked(session: Session, *, sku: Sku, regions: list[str], first: date, end: date) -> bool:
    """Whether `take` would count the rental against an inventory (and so hold units, or refuse): the first of
    `regions` is tracked and the rental is not over."""
    if not regions or end <= max(first, catalog_today(session)):
        return False
    return repository.inventory_row(session, sku_pk=sku.id, region=regions[0]) is not None


def take(
    session: Session,
    *,
    quote_id: int,
    sku: Sku,
    regions: list[str],
    units: int,
    first: date,
    end: date,
    now: datetime,
) -> Reservation | None:
    """The units of a quote accepted without a hold (issued while none of its regions was tracked), confirmed in the
    first of `regions` tracked now that has them free from today (or its first day) to `end`; None where a region
    before any such is still not tracked (as `choose_region`), or the rental is over. Counted under each inventory
    row's lock, the one a new quote's hold counts under; raises CapacityTaken when every region is tracked and
    short (review R4: such a quote was accepted holding nothing, and the region oversold)."""
    today = catalog_today(session)
    count_from = max(first, today)
    if end <= count_from:
        return None
    short: list[Free] = []
    for region in regions:
        row = repository.inventory_row(session, sku_pk=sku.id, region=region, lock=True)
        if row is None:
            return None
        holds = _holds(session, sku_pk=sku.id, region=region, start=count_from, now=now)
        free = free_units(row.units_available, holds, count_from, end)
        if free >= units:
            days = (first, end, units)
            return _reserve(session, quote_id, sku, region, days, state="confirmed", held_until=now, now=now)
        found = next_free(row.units_available, holds, count_from, (end - count_from).days, units)
        short.append(Free(region, row.units_available, free, found))
    raise taken(sku, short[0], units=units, start=count_from, latest=last_start(today))


def release(session: Session, *, quote_id: int) -> None:
    """The quote was cancelled: its units are free again at once."""
    _set_state(session, quote_id, "released")


def _set_state(session: Session, quote_id: int, state: str) -> bool:
    reservation = repository.reservation_of(session, quote_id)
    if reservation is not None and reservation.state != state:
        reservation.state = state
        session.flush()
    return reservation is not None


# ---------------------------------------------------------------- the admin's edits


@dataclass(frozen=True, slots=True)
class Overbooking:
    """More units held than exist in a region from today: `shortfall`, the most units short on one day, from
    `first_day`; `quote_ids`, the quotes (issued or accepted) whose reservations hold units on such a day."""

    shortfall: int
    first_day: date | None
    quote_ids: list[int]


def overbooking(
    session: Session, *, sku_pk: int, region: str, total: int, hold: Hold | None = None, now: datetime | None = None
) -> Overbooking:
    """What the reservations and maintenance holds of a SKU in a region would take beyond `total`, from today (the
    catalog's timezone) on, with `hold` in place of the maintenance hold of its first day: read before an admin's
    edit is written, to refuse one that oversells."""
    now = now or datetime.now(UTC)
    today = catalog_today(session)
    reserved = repository.reservations(session, now=now, after=today, sku_pk=sku_pk, region=region)
    kept = repository.maintenance(session, after=today, sku_pk=sku_pk, region=region)
    holds = [Hold(r.starts_on, r.ends_on, r.units) for r in reserved] + [
        Hold(m.starts_on, m.ends_on, m.units) for m in kept if hold is None or m.starts_on != hold.starts_on
    ]
    if hold is not None:
        holds.append(hold)
    short = overbooked_days(total, holds, today)
    if not short:
        return Overbooking(0, None, [])
    ids = sorted({r.quote_id for r in reserved for day in short if r.starts_on <= day < r.ends_on})
    return Overbooking(max(short.values()), min(short), ids)


def regions_in_use(session: Session, *, sku_pk: int, now: datetime | None = None) -> set[str]:
    """The SKU's regions that track inventory or hold units from today (the catalog's timezone) on: quotes issued
    or accepted, maintenance. A SKU keeps these among its regions (review R7-3: dropped, its inventory row could no
    longer be edited and the catalog's own export no longer imported)."""
    return repository.regions_in_use(session, sku_pk=sku_pk, now=now or datetime.now(UTC), after=catalog_today(session))


# ---------------------------------------------------------------- the planner's view


def holds_by_sku(session: Session, *, start: date, now: datetime | None = None) -> dict[tuple[str, str], list[Hold]]:
    """Every hold on some day from `start`, by (SKU id, region): one indexed statement per recommendation."""
    out: dict[tuple[str, str], list[Hold]] = {}
    for slug, region, first, end, units in repository.holds_by_slug(session, now=now or datetime.now(UTC), after=start):
        out.setdefault((slug, region), []).append(Hold(first, end, units))
    return out


# ---------------------------------------------------------------- the capacity page


@dataclass(frozen=True, slots=True)
class MonthUse:
    """One calendar month of a SKU's units in a region: the most units held on any one day of it by accepted
    quotes, by issued quotes (still valid) and by maintenance, and the units free on every day of it."""

    month: date  # its first day
    accepted: int
    issued: int
    maintenance: int
    free: int
    overbooked: int = 0  # the most units held beyond the inventory on one day of it (an admin forced a cut)


@dataclass(frozen=True, slots=True)
class RegionUse:
    sku_id: str
    region: str
    total: int
    rental_unit: str
    months: list[MonthUse]


def month_starts(first: date, count: int) -> list[date]:
    """The first days of `count` calendar months from the month of `first` (and the one after, to end the last)."""
    out, year, month = [], first.year, first.month
    for _ in range(count + 1):
        out.append(date(year, month, 1))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def capacity_by_month(session: Session, *, months: int, now: datetime | None = None) -> list[RegionUse]:
    """Every tracked SKU and region, month by month from the current one (the catalog's timezone)."""
    now = now or datetime.now(UTC)
    starts = month_starts(catalog_today(session), months)
    out = []
    for row in repository.inventory(session):
        reserved = repository.reservations(session, now=now, after=starts[0], sku_pk=row.sku_pk, region=row.region)
        kept = repository.maintenance(session, after=starts[0], sku_pk=row.sku_pk, region=row.region)
        accepted = [Hold(r.starts_on, r.ends_on, r.units) for r in reserved if r.state == "confirmed"]
        issued = [Hold(r.starts_on, r.ends_on, r.units) for r in reserved if r.state == "held"]
        maintenance = [Hold(m.starts_on, m.ends_on, m.units) for m in kept]
        every = accepted + issued + maintenance
        uses = [
            MonthUse(
                first,
                held_peak(accepted, first, end),
                held_peak(issued, first, end),
                held_peak(maintenance, first, end),
                free_units(row.units_available, every, first, end),
                max(0, held_peak(every, first, end) - row.units_available),
            )
            for first, end in zip(starts, starts[1:], strict=False)
        ]
        out.append(RegionUse(row.sku.slug, row.region, row.units_available, row.sku.rental_unit, uses))
    return out
