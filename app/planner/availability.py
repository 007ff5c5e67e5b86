"""Where an option's units are free: the region it is placed in, the units free there over its rental from the
request's start date, and from when the units it needs are free. PURE (the offers and app.capacity.ledger).

An offer's `availability` is the inventory per region the admin tracks (None: none tracked) and its `holds` what
quotes and maintenance hold there (app.planner.market loads them per request). A region of a tracked SKU without
a figure is not tracked either: quoted on request, as POST /quotes does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from app.capacity.ledger import free_units, next_free, window
from app.estimator.vocabulary import MAX_QUOTE_MONTHS, TERM_MONTHS
from app.planner.offers import Configuration, Constraints, Offer, rented_units

# "available": the units are free from the start; "later": from a later day (`from_`); "unavailable": the region
# has fewer than the option needs; "not tracked": no inventory figure, confirmed with the quote.
AvailabilityStatus = Literal["available", "later", "unavailable", "not tracked"]


@dataclass(frozen=True, slots=True)
class Availability:
    region: str
    units: int  # what the option rents (cards or servers)
    start: date  # the rental's first day asked for
    free_units: int | None  # free on every day of the rental from `start`; None: not tracked
    from_: date | None  # the first day the `units` are free for the rental; None: never (or not tracked)

    @property
    def status(self) -> AvailabilityStatus:
        if self.free_units is None:
            return "not tracked"
        if self.free_units >= self.units:
            return "available"
        return "later" if self.from_ is not None else "unavailable"

    @property
    def short(self) -> bool:
        """Tracked, and fewer units free from the start than the option rents: a near miss (`capacity`)."""
        return self.free_units is not None and self.free_units < self.units

    def miss_params(self, sku_id: str, unit: str) -> dict[str, Any]:
        return {
            "sku": sku_id,
            "region": self.region,
            "units": self.units,
            "unit": unit,
            "free_units": self.free_units,
            "start_date": self.start.isoformat(),
            "free_from": self.from_.isoformat() if self.from_ else None,
        }


def in_region(offer: Offer, region: str, units: int, months: int, start: date) -> Availability:
    """What is free in `region` over a rental of `months` from `start`, judged over at most the longest rental a
    quote prices (MAX_QUOTE_MONTHS): a longer job is a `quote_months` near miss on its own, and its billed months
    (10^5 for a large pretraining run on a small plan) would run past the calendar's end (review R5-1)."""
    months = min(months, MAX_QUOTE_MONTHS)
    total = None if offer.availability is None else offer.availability.get(region)
    if total is None:
        return Availability(region, units, start, None, None)
    holds = offer.holds.get(region, ())
    first, end = window(start, months)
    free = free_units(total, holds, first, end)
    found = start if free >= units else next_free(total, holds, start, (end - first).days, units, months=months)
    return Availability(region, units, start, free, found)


def allowed_regions(offer: Offer, constraints: Constraints) -> list[str]:
    """The offer's regions the request allows (all of them when it names none), in the catalog's order."""
    return [r for r in offer.regions if not constraints.regions or r in constraints.regions]


def place(offer: Offer, config: Configuration, constraints: Constraints, months: int | None) -> Availability:
    """A training plan's region and what is free there (`placed`), over its billed months (one term without)."""
    return placed(offer, rented_units(offer, config), constraints, months or TERM_MONTHS[constraints.term])


def placed(offer: Offer, units: int, constraints: Constraints, months: int) -> Availability:
    """Where an option renting `units` for `months` goes, for training plans and serving deployments alike (review
    R7-1): the first allowed region with the units free from the start, else the first not tracked, else the first
    allowed (short, with its figures)."""
    allowed = allowed_regions(offer, constraints) or [offer.regions[0]]
    start = constraints.start_date or date.today()  # the service always sets it (the catalog's today)
    found = [in_region(offer, region, units, months, start) for region in allowed]
    return next(
        (a for a in found if a.status == "available"),
        next((a for a in found if a.free_units is None), found[0]),
    )
