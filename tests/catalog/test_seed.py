"""Seeding is idempotent and never overwrites what an admin changed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.models import GpuType, Sku, SkuPrice, TermDiscount
from app.catalog.pricing import sku_pricing
from app.catalog.repository import get_sku_by_slug
from app.entry.seed import seed_database
from tests.factories import new_price


def _counts(db: Session) -> tuple[int, ...]:
    return tuple(db.scalar(select(func.count()).select_from(m)) for m in (GpuType, Sku, SkuPrice, TermDiscount))


def test_seed_twice_changes_nothing(db: Session) -> None:
    before = _counts(db)
    report = seed_database(db)
    assert report.created == []
    assert _counts(db) == before
    assert before == (5, 3, 3, 6)


def test_seed_keeps_an_admin_price_and_discount(db: Session) -> None:
    sku = get_sku_by_slug(db, "h100-80g-sxm-8x")
    db.add(
        SkuPrice(
            sku=sku,
            amount_minor=9_500_000,
            currency="CNY",
            effective_from=datetime.now(UTC),
            created_by="admin@example.com",
        )
    )
    next(d for d in sku.discounts if d.term == "annual").discount_bp = 1800
    db.flush()
    seed_database(db)
    db.expire_all()
    pricing = sku_pricing(get_sku_by_slug(db, "h100-80g-sxm-8x"))
    assert pricing.monthly_list == Decimal("95000.00")
    assert pricing.terms["annual"].monthly_effective == Decimal("77900.00")


def test_future_price_is_not_in_force_yet(db: Session) -> None:
    next_month = datetime.now(UTC) + timedelta(days=30)
    new_price(db, "a100-40g-pcie-card", 300_000, effective_from=next_month)
    db.expire_all()
    assert sku_pricing(get_sku_by_slug(db, "a100-40g-pcie-card")).monthly_list == Decimal("2800.00")
