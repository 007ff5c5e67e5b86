"""Catalog tables: GPU types (commercial references to the hardware data file), server SKUs,
their price history, their term discounts, their availability and the add-ons sold with them
(e.g. InfiniBand).

Money is stored as integer minor units (fen for CNY) beside an ISO 4217 code: SQLite keeps
`Numeric` as a float, which would not round-trip exactly.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.catalog import revision as _revision  # noqa: F401 (its listener marks every catalog write)
from app.db.base import Base, TimestampMixin, UtcDateTime, VersionedMixin, one_of, utcnow
from app.estimator.vocabulary import RENTAL_UNITS, SKU_STATUSES, TERMS


class GpuType(TimestampMixin, Base):
    """A GPU type the company rents. Its physics lives in app/estimator/data/gpus.json under `slug`."""

    __tablename__ = "gpu_types"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(128))


class Sku(TimestampMixin, VersionedMixin, Base):
    __tablename__ = "skus"
    __table_args__ = (
        one_of("rental_unit", RENTAL_UNITS),
        one_of("status", SKU_STATUSES),
        CheckConstraint("gpus_per_node > 0", name="gpus_per_node_positive"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    gpu_type_id: Mapped[int] = mapped_column(ForeignKey("gpu_types.id"))
    rental_unit: Mapped[str] = mapped_column(String(8))  # 'card': priced per card; 'node': whole server
    gpus_per_node: Mapped[int] = mapped_column(Integer)
    card_counts: Mapped[list[int]] = mapped_column(JSON)  # cards one may rent in one server
    intra_node_link: Mapped[str] = mapped_column(String(32))  # interconnect slug, e.g. nvlink4, pcie4
    interconnect: Mapped[str] = mapped_column(String(200))  # as sold, for people
    host_cpu: Mapped[str] = mapped_column(String(200), default="")
    host_ram_gib: Mapped[int | None] = mapped_column(Integer, nullable=True)
    host_nvme_tb: Mapped[str] = mapped_column(String(100), default="")
    network: Mapped[str] = mapped_column(String(200), default="")
    inter_node_fabric: Mapped[str | None] = mapped_column(String(32), nullable=True)  # e.g. ib-ndr-400
    infiniband_addon: Mapped[bool] = mapped_column(Boolean, default=False)
    regions: Mapped[list[str]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="active")
    indicative_price: Mapped[bool] = mapped_column(Boolean, default=False)
    notes: Mapped[str] = mapped_column(Text, default="")

    gpu_type: Mapped[GpuType] = relationship(lazy="joined")
    prices: Mapped[list[SkuPrice]] = relationship(
        back_populates="sku", order_by="SkuPrice.effective_from", lazy="selectin"
    )
    discounts: Mapped[list[TermDiscount]] = relationship(back_populates="sku", lazy="selectin")


class OfSkuMixin:
    """A row that belongs to one SKU and is deleted with it (column `sku_id`; `sku_pk` in Python, as the
    API's SKU id is the slug)."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=-1)
    sku_pk: Mapped[int] = mapped_column("sku_id", ForeignKey("skus.id", ondelete="CASCADE"), index=True, sort_order=-1)


class SkuPrice(OfSkuMixin, Base):
    """One monthly list price per rental unit, valid from `effective_from`; rows are never updated."""

    __tablename__ = "sku_prices"
    __table_args__ = (CheckConstraint("amount_minor > 0", name="amount_positive"),)

    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    effective_from: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(200), default="seed")
    note: Mapped[str] = mapped_column(Text, default="")

    sku: Mapped[Sku] = relationship(back_populates="prices")


class TermDiscount(OfSkuMixin, VersionedMixin, Base):
    """Discount for a rental term, in basis points (2000 = 20 %)."""

    __tablename__ = "term_discounts"
    __table_args__ = (
        one_of("term", TERMS),
        CheckConstraint("discount_bp >= 0 AND discount_bp <= 9000", name="discount_range"),
        UniqueConstraint("sku_id", "term"),
    )

    term: Mapped[str] = mapped_column(String(16))
    discount_bp: Mapped[int] = mapped_column(Integer)

    sku: Mapped[Sku] = relationship(back_populates="discounts")


class SkuAvailability(OfSkuMixin, VersionedMixin, Base):
    """Units of a SKU (cards or servers, per its rental unit) an admin says are free to rent in a region."""

    __tablename__ = "sku_availability"
    __table_args__ = (
        CheckConstraint("units_available >= 0", name="units_non_negative"),
        UniqueConstraint("sku_id", "region"),
    )

    region: Mapped[str] = mapped_column(String(64))
    units_available: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)

    sku: Mapped[Sku] = relationship()


class SkuAddon(OfSkuMixin, TimestampMixin, VersionedMixin, Base):
    """An option sold with a SKU. `amount_minor` NULL means "priced on consultation".

    A fabric add-on (InfiniBand, RoCE) also carries its bandwidth: `ports_per_server` NICs of `port_gbps` Gbit/s
    each, per server (both NULL for an add-on that is not a fabric, e.g. extra NVMe), and where that figure
    comes from (`bandwidth_source`); the estimator and the planner size the traffic between servers with it."""

    __tablename__ = "sku_addons"
    __table_args__ = (
        one_of("per_unit", RENTAL_UNITS),
        one_of("status", SKU_STATUSES),
        CheckConstraint("amount_minor IS NULL OR amount_minor > 0", name="amount_positive"),
        CheckConstraint(
            "(ports_per_server IS NULL AND port_gbps IS NULL) OR (ports_per_server > 0 AND port_gbps > 0)",
            name="bandwidth_both_or_none",
        ),
        UniqueConstraint("sku_id", "code"),
    )

    code: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    amount_minor: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # monthly, per unit
    currency: Mapped[str] = mapped_column(String(3))
    per_unit: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16), default="active")
    ports_per_server: Mapped[int | None] = mapped_column(Integer, nullable=True)
    port_gbps: Mapped[int | None] = mapped_column(Integer, nullable=True)  # line rate of one port, Gbit/s
    bandwidth_source: Mapped[str] = mapped_column(Text, default="")

    @property
    def server_gbps(self) -> int | None:
        """The fabric's line rate into one server (all its ports), Gbit/s; None when the add-on is not a fabric."""
        if self.ports_per_server is None or self.port_gbps is None:
            return None
        return self.ports_per_server * self.port_gbps
