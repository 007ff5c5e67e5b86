"""A quote's rental dates and the units it holds (app.capacity): the start date, the region held, the hold taken
when the quote is written, confirmed when it is accepted and released when it is cancelled. An expired quote
releases its units by itself (app.capacity.models.Reservation.held_until).

The quote keeps what it holds in its snapshot (`rental`), so its page and PDF show it as issued.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.capacity import service as capacity
from app.capacity.ledger import window
from app.catalog import repository as catalog_repository
from app.catalog.models import Sku
from app.quotes.models import Quote
from app.quotes.schemas import ReservationOut


@dataclass(frozen=True, slots=True)
class Rental:
    start: date
    region: str | None  # where the units are held; None: not tracked there (quoted on request)
    units: int
    months: int


def start_of(session: Session, start_date: date | None) -> date:
    """The rental's first day: the one asked for (today to a year ahead), else today in the catalog's timezone."""
    return capacity.start_of(session, start_date, field="start_date")


def plan_rental(
    session: Session, *, sku: Sku, regions: list[str], quantity: int, start: date, months: int, now: datetime
) -> Rental:
    """Where the rental's units would be held, read before any lock: raises CapacityTaken (409) when no region
    has them free, so a refused quote queues on nothing and spends no quote of the client's rate."""
    region = capacity.choose_region(
        session, sku=sku, regions=regions, units=quantity, start=start, months=months, now=now
    )
    return Rental(start, region, quantity, months)


def hold_rental(session: Session, *, quote: Quote, sku: Sku, rental: Rental, now: datetime) -> None:
    """Hold the quote's units (the quote is written, its number taken): counted again under the inventory lock."""
    if rental.region is not None:
        held = capacity.hold(
            session,
            quote_id=quote.id,
            sku=sku,
            region=rental.region,
            units=rental.units,
            start=rental.start,
            months=rental.months,
            held_until=quote.valid_until,
            now=now,
        )
        rental = rental if held is not None else replace(rental, region=None)
    quote.snapshot = {**quote.snapshot, "rental": rental_snapshot(rental)}


def rental_snapshot(rental: Rental) -> dict[str, Any]:
    first, end = window(rental.start, rental.months)
    held = None if rental.region is None else {"region": rental.region, "units": rental.units}
    return {"start_date": first.isoformat(), "ends_on": end.isoformat(), "held": held}


def confirm(session: Session, quote: Quote, *, now: datetime) -> None:
    """The quote is accepted: its hold stands. One that holds nothing (its regions were not tracked when it was
    issued) takes its units now where a region of it is tracked, or raises CapacityTaken (capacity.take)."""
    sku = None if quote.sku_pk is None else catalog_repository.get_sku(session, quote.sku_pk)
    if capacity.confirm(session, quote_id=quote.id) or sku is None:
        return
    rental = quote.snapshot.get("rental")
    start = date.fromisoformat(rental["start_date"]) if rental else capacity.catalog_today(session)
    first, end = window(start, quote.months)
    regions = list(quote.snapshot["sku"]["regions"])
    held = capacity.take(
        session, quote_id=quote.id, sku=sku, regions=regions, units=quote.quantity, first=first, end=end, now=now
    )
    if held is not None:
        taken = Rental(start, held.region, held.units, quote.months)
        quote.snapshot = {**quote.snapshot, "rental": rental_snapshot(taken)}


def release(session: Session, quote: Quote) -> None:
    capacity.release(session, quote_id=quote.id)


def start_date_of(quote: Quote) -> date | None:
    rental = quote.snapshot.get("rental")
    return date.fromisoformat(rental["start_date"]) if rental else None


def reservation_out(quote: Quote, *, holding: bool) -> ReservationOut | None:
    rental = quote.snapshot.get("rental")
    if not rental or not rental.get("held"):
        return None
    return ReservationOut(
        region=rental["held"]["region"],
        units=rental["held"]["units"],
        starts_on=date.fromisoformat(rental["start_date"]),
        ends_on=date.fromisoformat(rental["ends_on"]),
        last_day=date.fromisoformat(rental["ends_on"]) - timedelta(days=1),
        holding=holding,
    )
