"""Quote tables: the frozen quote, its line items and the gap-free yearly number counter (the
priced add-ons a quote may include belong to the catalog: app.catalog.models.SkuAddon).

A quote is a commercial document: every figure it shows is copied onto its own rows (minor
units) and into `snapshot` when it is issued, so later catalog edits never change it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base, TimestampMixin, UtcDateTime, one_of, utcnow
from app.estimator.vocabulary import QUOTE_STATUSES, TERMS


class QuoteNumberCounter(Base):
    """One row per year; `last_value` is bumped inside the transaction that inserts the quote, so a
    rolled-back quote gives its number back and committed numbers have no gaps."""

    __tablename__ = "quote_number_counters"

    year: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_value: Mapped[int] = mapped_column(BigInteger)


class Quote(TimestampMixin, Base):
    __tablename__ = "quotes"
    __table_args__ = (
        one_of("status", QUOTE_STATUSES),
        one_of("term", TERMS),
        CheckConstraint("quantity > 0", name="quantity_positive"),
        CheckConstraint("months > 0", name="months_positive"),
        UniqueConstraint("year", "sequence"),
        UniqueConstraint("idempotency_scope", "idempotency_key"),
        Index("ix_quotes_created_at", "created_at"),
        # GET /quotes for an API key: one organisation's quotes in (created_at, id) order (app.quotes.search)
        Index("ix_quotes_organisation_created_at", "organisation", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    public_id: Mapped[str] = mapped_column(String(64), unique=True)  # secrets.token_urlsafe(24): 192 bits
    number: Mapped[str] = mapped_column(String(32), unique=True)  # Q-2026-000123
    year: Mapped[int] = mapped_column(Integer)
    sequence: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="issued", index=True)
    valid_until: Mapped[datetime] = mapped_column(UtcDateTime())
    currency: Mapped[str] = mapped_column(String(3))
    sku_pk: Mapped[int | None] = mapped_column("sku_id", ForeignKey("skus.id", ondelete="SET NULL"), nullable=True)
    sku_slug: Mapped[str] = mapped_column(String(64))
    sku_version: Mapped[int] = mapped_column(Integer)
    sku_price_id: Mapped[int] = mapped_column(Integer)  # the catalog price row (version) used
    term: Mapped[str] = mapped_column(String(16))
    months: Mapped[int] = mapped_column(Integer)
    quantity: Mapped[int] = mapped_column(Integer)
    discount_bp: Mapped[int] = mapped_column(Integer)
    unit_list_minor: Mapped[int] = mapped_column(BigInteger)  # monthly, per rental unit
    unit_effective_minor: Mapped[int] = mapped_column(BigInteger)  # monthly, per rental unit, after discount
    subtotal_minor: Mapped[int] = mapped_column(BigInteger)
    discount_total_minor: Mapped[int] = mapped_column(BigInteger)
    total_minor: Mapped[int] = mapped_column(BigInteger)
    estimator_version: Mapped[str] = mapped_column(String(32))
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)  # seller, SKU, prices, add-ons, workload, plan
    customer_name: Mapped[str] = mapped_column(String(200))
    customer_company: Mapped[str] = mapped_column(String(200), default="")
    customer_email: Mapped[str] = mapped_column(String(320), index=True)
    # An Idempotency-Key is unique within its scope: the API key's organisation, or "" for callers without a key
    # (one scope of their own); organisation names are never empty (app.apikeys.schemas). Not NULL: a UNIQUE
    # over a NULL column would let every NULL scope reuse a key, on PostgreSQL and SQLite alike.
    idempotency_scope: Mapped[str] = mapped_column(String(100), default="")
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    accepted_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    cancelled_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    cancelled_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    cancel_reason: Mapped[str] = mapped_column(Text, default="")
    # The organisation of the API key the quote was issued with (app.apikeys); None: the wizard, the API
    # without a key, or a quote older than keys.
    organisation: Mapped[str | None] = mapped_column(String(100), nullable=True)

    lines: Mapped[list[QuoteLine]] = relationship(
        back_populates="quote", order_by="QuoteLine.position", lazy="selectin", cascade="all, delete-orphan"
    )


class QuoteLine(Base):
    """One line item. `unit_price_minor`/`amount_minor` NULL: priced on consultation, not in the total."""

    __tablename__ = "quote_lines"
    __table_args__ = (
        CheckConstraint("kind IN ('rental', 'addon')", name="kind"),
        UniqueConstraint("quote_id", "position"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    quote_id: Mapped[int] = mapped_column(ForeignKey("quotes.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    code: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(String(300))
    unit: Mapped[str] = mapped_column(String(8))  # 'card' or 'node'
    quantity: Mapped[int] = mapped_column(Integer)
    months: Mapped[int] = mapped_column(Integer)
    unit_price_minor: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # monthly list, per unit
    discount_bp: Mapped[int] = mapped_column(Integer, default=0)
    discount_minor: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    amount_minor: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)

    quote: Mapped[Quote] = relationship(back_populates="lines")


class QuoteDocument(Base):
    """A quote's PDF, rendered once and kept: one per quote and language. The HTML it was rendered from is
    named by its SHA-256; a change of status (accepted, cancelled, expired), of template or of address
    makes other HTML, and its PDF replaces the row, so a quote never holds more than one PDF per language.
    All rows together stay under PDF_STORE_MAX_BYTES (the least recently used are deleted, and rendered
    again when asked for), so what clients ask for bounds it."""

    __tablename__ = "quote_documents"

    quote_id: Mapped[int] = mapped_column(ForeignKey("quotes.id", ondelete="CASCADE"), primary_key=True)
    lang: Mapped[str] = mapped_column(String(8), primary_key=True)
    html_sha256: Mapped[str] = mapped_column(String(64))
    pdf: Mapped[bytes] = mapped_column(LargeBinary)
    size_bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    used_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, index=True)
