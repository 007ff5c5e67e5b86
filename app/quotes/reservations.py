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
from app.common.errors import Forbidden
from app.quotes.models import Quote
from app.quotes.schemas import ReservationOut
from app.text import messages


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


def unheld(rental: Rental) -> Rental:
    """The rental of a quote issued without an API key: its units were found free (`plan_rental`), and none is held.
    Anonymous quotes (the wizard's, a script's) hold no inventory, so no client can empty a region with them; a
    sales key's quote holds, and sales confirm the others on acceptance (`confirm`) (review R4-5)."""
    return replace(rental, region=None)


def unheld_notes(rental: Rental, sku: Sku) -> list[tuple[str, dict[str, Any]]]:
    """The note of a rental found free in a tracked region but not held (`unheld`): none where nothing is tracked."""
    if rental.region is None:
        return []
    return [
        (
            "units_not_reserved",
            {"region": rental.region, "units": rental.units, "unit": sku.rental_unit, "sku": sku.slug},
        )
    ]


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


def confirm(session: Session, quote: Quote, *, now: datetime, by_sales: bool) -> None:
    """The quote is accepted: its hold stands. One that holds nothing (issued without an API key, or while its
    regions were not tracked) takes its units now where a region of it is tracked, or raises CapacityTaken
    (capacity.take); unless `by_sales` (a quote a sales key issued, or accepted with such a key or an admin's
    token), that is refused with SalesConfirmationNeeded (403): an anonymous quote's public accept link never
    takes inventory for good (review R4-5)."""
    sku = None if quote.sku_pk is None else catalog_repository.get_sku(session, quote.sku_pk)
    if capacity.confirm(session, quote_id=quote.id) or sku is None:
        return
    rental = quote.snapshot.get("rental")
    start = date.fromisoformat(rental["start_date"]) if rental else capacity.catalog_today(session)
    first, end = window(start, quote.months)
    regions = list(quote.snapshot["sku"]["regions"])
    if not by_sales and capacity.tracked(session, sku=sku, regions=regions, first=first, end=end):
        raise sales_confirmation_needed(quote.number, sku, regions[0], quote.quantity)
    held = capacity.take(
        session, quote_id=quote.id, sku=sku, regions=regions, units=quote.quantity, first=first, end=end, now=now
    )
    if held is not None:
        taken = Rental(start, held.region, held.units, quote.months)
        quote.snapshot = {**quote.snapshot, "rental": rental_snapshot(taken)}


class SalesConfirmationNeeded(Forbidden):
    """403: accepting the quote would take tracked units, which only sales (an API key, an admin) may do."""


def sales_confirmation_needed(number: str, sku: Sku, region: str, units: int) -> SalesConfirmationNeeded:
    params = {"quote": number, "sku": sku.slug, "region": region, "units": units, "unit": sku.rental_unit}
    message = messages.quote_check("accept_needs_sales", params)
    error = {"field": "quote", "message": message, "type": "accept_needs_sales", "params": params}
    return SalesConfirmationNeeded(message, errors=[error], extra={"code": "accept_needs_sales"})


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
