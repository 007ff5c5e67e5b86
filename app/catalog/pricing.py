"""Price rules: which list price is in force, and what a term costs after its discount."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import cast

from app.catalog.models import Sku, SkuPrice
from app.common.money import apply_discount, from_minor
from app.estimator.vocabulary import TERMS, Term


@dataclass(frozen=True, slots=True)
class TermPrice:
    term: Term
    discount_bp: int
    monthly_effective: Decimal  # per rental unit


@dataclass(frozen=True, slots=True)
class SkuPricing:
    currency: str
    monthly_list: Decimal  # per rental unit
    price_id: int
    effective_from: datetime
    terms: dict[Term, TermPrice]


def as_utc(moment: datetime) -> datetime:
    """`moment` with its timezone (SQLite returns naive datetimes: read as UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def current_price(sku: Sku, *, at: datetime | None = None) -> SkuPrice | None:
    """The newest price whose effective date has come (SQLite returns naive datetimes: read as UTC)."""
    moment = at or datetime.now(UTC)
    in_force = [p for p in sku.prices if as_utc(p.effective_from) <= moment]
    return max(in_force, key=lambda p: (as_utc(p.effective_from), p.id), default=None)


def sku_pricing(sku: Sku, *, at: datetime | None = None) -> SkuPricing | None:
    price = current_price(sku, at=at)
    if price is None:
        return None
    monthly_list = from_minor(price.amount_minor, price.currency)
    # a CHECK constraint holds TermDiscount.term to the vocabulary
    discounts: dict[Term, int] = {term: 0 for term in TERMS} | {
        cast(Term, d.term): d.discount_bp for d in sku.discounts
    }
    terms = {
        term: TermPrice(term, bp, apply_discount(monthly_list, bp, price.currency)) for term, bp in discounts.items()
    }
    return SkuPricing(price.currency, monthly_list, price.id, as_utc(price.effective_from), terms)


def scheduled_price(sku: Sku, *, after: datetime | None = None) -> SkuPrice | None:
    """The earliest price of `sku` still to take effect after `after` (default now): what /catalog/skus shows as
    `next_price`, and what a rental starting on or after its date is priced at (app.capacity.service.priced_at)."""
    moment = after or datetime.now(UTC)
    scheduled = [p for p in sku.prices if as_utc(p.effective_from) > moment]
    return min(scheduled, key=lambda p: (as_utc(p.effective_from), p.id), default=None)


def next_price_change(skus: list[Sku], *, after: datetime) -> datetime | None:
    """When the earliest scheduled price of these SKUs takes effect (None: none is scheduled)."""
    return min(
        (as_utc(p.effective_from) for sku in skus for p in sku.prices if as_utc(p.effective_from) > after), default=None
    )
