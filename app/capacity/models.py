"""Capacity tables: maintenance holds an admin puts on a SKU's units in a region, and reservations, the units an
issued or accepted quote holds (app.capacity.service). The units that exist per SKU and region are the catalog's
inventory rows (app.catalog.models.SkuAvailability.units_available).

A reservation copies what it holds from its quote (SKU, region, dates, units) so that counting what is held reads
this table alone: `state` is `held` while its quote is issued (counted until `held_until`, the quote's validity, so
an expired quote releases its units without a job), `confirmed` once the quote is accepted, `released` once it is
cancelled.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import CheckConstraint, Date, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime, VersionedMixin, one_of, utcnow

RESERVATION_STATES = ("held", "confirmed", "released")


class MaintenanceHold(VersionedMixin, Base):
    """Units of a SKU out of service in a region from `starts_on` up to (not including) `ends_on`; one hold per SKU,
    region and first day (the admin API's address of it)."""

    __tablename__ = "maintenance_holds"
    __table_args__ = (
        UniqueConstraint("sku_id", "region", "starts_on"),
        CheckConstraint("units > 0", name="units_positive"),
        CheckConstraint("ends_on > starts_on", name="ends_after_start"),
        Index("ix_maintenance_holds_sku_region", "sku_id", "region", "ends_on"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sku_pk: Mapped[int] = mapped_column("sku_id", ForeignKey("skus.id", ondelete="CASCADE"))
    region: Mapped[str] = mapped_column(String(64))
    starts_on: Mapped[date] = mapped_column(Date)
    ends_on: Mapped[date] = mapped_column(Date)
    units: Mapped[int] = mapped_column(Integer)
    note: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)


class Reservation(Base):
    """The units one quote holds from its start date for its months (calendar months: app.capacity.ledger.window)."""

    __tablename__ = "reservations"
    __table_args__ = (
        one_of("state", RESERVATION_STATES),
        CheckConstraint("units > 0", name="units_positive"),
        CheckConstraint("ends_on > starts_on", name="ends_after_start"),
        Index("ix_reservations_sku_region", "sku_id", "region", "ends_on"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    quote_id: Mapped[int] = mapped_column(ForeignKey("quotes.id", ondelete="CASCADE"), unique=True)
    sku_pk: Mapped[int] = mapped_column("sku_id", ForeignKey("skus.id", ondelete="CASCADE"))
    region: Mapped[str] = mapped_column(String(64))
    starts_on: Mapped[date] = mapped_column(Date)
    ends_on: Mapped[date] = mapped_column(Date)
    units: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="held")
    held_until: Mapped[datetime] = mapped_column(UtcDateTime())  # an issued quote's validity
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
