"""Refusing an admin's edit that oversells: lowering a region's inventory, or adding or widening a maintenance hold,
so that the quotes (issued or accepted) and holds then take more units than exist on some day from today.

Such an edit is a 409 (`code` overbooked) naming the quotes affected and the units short, and nothing is saved,
unless the request says `force` (a server broke: the units are gone whatever the quotes say). What is forced shows
on the capacity page and API as the units `overbooked` per month. Only an edit that makes the shortfall worse is
refused: an edit of a region already overbooked (by a forced edit) that does not add to it goes through. The check
runs before anything is written, under the inventory row's lock (the one a quote's hold counts under).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.capacity import service
from app.capacity.ledger import Hold
from app.common.errors import Conflict
from app.quotes import repository as quotes


@dataclass(frozen=True, slots=True)
class Edit:
    """A SKU's units in a region as they stand (`total`, the inventory) and as the edit would leave them."""

    sku_pk: int
    slug: str
    region: str
    total: int
    new_total: int
    hold: Hold | None = None  # the maintenance hold as edited (replacing the one of its first day)


def refuse_overbooking(session: Session, edit: Edit, *, field: str, force: bool) -> None:
    """Raise the 409 when the edit would leave more units held than exist, short by more than now."""
    if force:
        return
    error = overbooking_error(session, edit, field=field)
    if error is None:
        return
    detail = f'{error["message"]}. Nothing was saved; send "force": true to save it anyway.'
    raise Conflict(detail, errors=[{**error, "message": detail}], extra={"code": "overbooked", **error["params"]})


def overbooking_error(session: Session, edit: Edit, *, field: str) -> dict[str, Any] | None:
    """The refusal of `field` (type overbooked: the units short, from when, the quotes holding them) when the edit
    would leave more units held than exist, short by more than now; None when it would not."""
    found = service.overbooking(session, sku_pk=edit.sku_pk, region=edit.region, total=edit.new_total, hold=edit.hold)
    if found.shortfall == 0:
        return None
    now = service.overbooking(session, sku_pk=edit.sku_pk, region=edit.region, total=edit.total)
    if found.shortfall <= now.shortfall:
        return None
    numbers = quotes.numbers_of(session, found.quote_ids)
    first = found.first_day.isoformat() if found.first_day else None
    message = (
        f"{edit.slug} in {edit.region} would then be overbooked by {found.shortfall} unit(s) from {first}: held by "
        f"{', '.join(numbers) or 'maintenance holds'}"
    )
    params = {"shortfall": found.shortfall, "first_day": first, "quotes": numbers}
    return {"field": field, "message": message, "type": "overbooked", "params": params}
