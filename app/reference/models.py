"""Reference prices of comparable cloud instances, and the exchange rates to compare them in.

On-demand hourly prices are dated, sourced and rated for confidence (seeded from
data/cloud_prices.csv, a snapshot of public catalogs); admins maintain both tables. Amounts are
integer micro-units (1e-6) of their currency: hourly cloud prices carry up to six decimals.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.catalog import revision as _revision  # noqa: F401 (its listener marks every catalog write)
from app.db.base import Base, UtcDateTime, utcnow

MICROS = 1_000_000


class ReferencePrice(Base):
    __tablename__ = "reference_prices"
    __table_args__ = (
        UniqueConstraint("provider", "region", "instance_type"),
        CheckConstraint("gpu_count > 0", name="gpu_count_positive"),
        CheckConstraint("hourly_micros > 0", name="hourly_positive"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    provider: Mapped[str] = mapped_column(String(64))
    region: Mapped[str] = mapped_column(String(100))
    instance_type: Mapped[str] = mapped_column(String(100))
    gpu_model: Mapped[str] = mapped_column(String(64))
    gpu_variant: Mapped[str] = mapped_column(String(64))
    gpu_memory_gb: Mapped[int] = mapped_column(Integer)
    gpu_count: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3), default="USD")
    hourly_micros: Mapped[int] = mapped_column(BigInteger)  # whole instance, per hour
    pricing_type: Mapped[str] = mapped_column(String(64), default="on-demand (list)")
    data_date: Mapped[str] = mapped_column(Text, default="")
    confidence: Mapped[str] = mapped_column(String(16), default="medium")
    source: Mapped[str] = mapped_column(Text, default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class ExchangeRate(Base):
    """`rate_micros` units of `quote` per one `base` (USD→CNY 7.1 = 7_100_000), from `effective_from`."""

    __tablename__ = "exchange_rates"
    __table_args__ = (CheckConstraint("rate_micros > 0", name="rate_positive"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    base: Mapped[str] = mapped_column(String(3))
    quote: Mapped[str] = mapped_column(String(3))
    rate_micros: Mapped[int] = mapped_column(BigInteger)
    effective_from: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    set_by: Mapped[str] = mapped_column(String(200), default="")
    note: Mapped[str] = mapped_column(Text, default="")
