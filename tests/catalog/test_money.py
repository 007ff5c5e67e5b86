"""Money is exact: Decimal in code, integer minor units in both databases."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy.orm import Session

from app.catalog.models import SkuPrice
from app.catalog.repository import get_sku_by_slug
from app.common.money import MoneyError, apply_discount, bp_to_percent, check_currency, from_minor, to_minor

AMOUNTS = ["0.01", "2240.00", "29999.99", "92233720368547758.07"]  # the last is the BIGINT maximum in fen


@pytest.mark.parametrize("amount", AMOUNTS)
def test_amounts_round_trip_exactly_through_the_database(db: Session, amount: str) -> None:
    sku = get_sku_by_slug(db, "a100-40g-pcie-card")
    row = SkuPrice(sku=sku, amount_minor=to_minor(Decimal(amount), "CNY"), currency="CNY")
    db.add(row)
    db.flush()
    db.expire(row)
    assert from_minor(row.amount_minor, "CNY") == Decimal(amount)
    assert str(from_minor(row.amount_minor, "CNY")) == amount


def test_minor_units_follow_the_currency() -> None:
    assert to_minor(Decimal("2800.00"), "CNY") == 280000
    assert to_minor(Decimal("1500"), "JPY") == 1500
    assert str(from_minor(1500, "JPY")) == "1500"
    with pytest.raises(MoneyError, match="more than 2 decimal places"):
        to_minor(Decimal("0.001"), "CNY")


def test_unknown_currency_is_refused() -> None:
    assert check_currency("usd") == "USD"
    with pytest.raises(MoneyError, match="unknown currency"):
        check_currency("XYZ1")


def test_discounts_round_half_up_to_the_minor_unit() -> None:
    assert apply_discount(Decimal("2800.00"), 2000, "CNY") == Decimal("2240.00")
    assert apply_discount(Decimal("0.05"), 5000, "CNY") == Decimal("0.03")
    assert str(bp_to_percent(2000)) == "20" and str(bp_to_percent(1250)) == "12.5"
