"""Admin API shapes for capacity: maintenance holds on a SKU's units and the capacity by month."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from app.admin.schemas import StrictModel, UtcDateTime, Version

Note = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)]


class HoldIn(StrictModel):
    """Units out of service from the hold's first day (in its address) up to (not including) `ends_on`, e.g. a
    server in repair."""

    ends_on: date = Field(description="The day the units are back (not held); after the first day")
    units: int = Field(ge=1, le=1_000_000, strict=True, description="Cards or servers, as the SKU rents")
    note: Note = Field(default="", description="Why, for the audit log and the page")
    version: Version | None = Field(default=None, description="null for a new hold; the hold's version to edit it")
    force: bool = Field(
        default=False,
        description="true: save it even though quotes then hold more units than are left (409 `overbooked` "
        "otherwise); the capacity page shows the units overbooked",
    )


class HoldOut(BaseModel):
    id: int
    region: str
    starts_on: date
    ends_on: date
    units: int
    note: str
    created_by: str
    version: int
    updated_at: UtcDateTime


class MonthUseOut(BaseModel):
    month: date = Field(description="The month's first day")
    accepted: int = Field(description="The most units accepted quotes hold on one day of the month")
    issued: int = Field(description="The most units issued (valid) quotes hold on one day of the month")
    maintenance: int = Field(description="The most units maintenance holds on one day of the month")
    free: int = Field(description="Units free on every day of the month")
    overbooked: int = Field(
        default=0, description="The most units held beyond the inventory on one day of the month (a forced cut)"
    )


class RegionUseOut(BaseModel):
    sku_id: str
    region: str
    total: int = Field(description="Units that exist (the inventory)")
    rental_unit: str
    months: list[MonthUseOut]
